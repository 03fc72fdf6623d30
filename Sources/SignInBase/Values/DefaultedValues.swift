/// A value with a default (`init()`), kept by its type in `DefaultedValues`.
public protocol DefaultedValue: Sendable, Equatable {
    init()
}

/// Values of several types, each found by its type; a type never set reads as its `init()`, and two stores are equal
/// when every type reads the same in both. What a configuration's family sections and a token request's family
/// parameters are kept in.
public struct DefaultedValues: Sendable, Equatable {
    private var values: [ObjectIdentifier: any DefaultedValue] = [:]

    public init() {}

    /// Whether no value was ever set.
    public var isEmpty: Bool { values.isEmpty }

    /// Every value set, in the order of their types' names (one order for the same values, wherever they were set).
    public var all: [any DefaultedValue] {
        values.values.sorted { String(reflecting: type(of: $0)) < String(reflecting: type(of: $1)) }
    }

    public subscript<Value: DefaultedValue>(_ type: Value.Type) -> Value {
        get { values[ObjectIdentifier(type)] as? Value ?? Value() }
        set { values[ObjectIdentifier(type)] = newValue }
    }

    public static func == (a: DefaultedValues, b: DefaultedValues) -> Bool {
        func same<V: DefaultedValue>(_ x: V, _ y: (any DefaultedValue)?) -> Bool { (y as? V ?? V()) == x }
        func equalAll(_ a: DefaultedValues, _ b: DefaultedValues) -> Bool {
            a.values.allSatisfy { key, value in same(value, b.values[key]) }
        }
        return equalAll(a, b) && equalAll(b, a)
    }
}
