import SignInBase

extension SignInConfiguration {
    /// A record the store keeps beside the credentials (sealed like an entry): its kind, its name and what it holds,
    /// as JSON text. The API room writes them (an API's client and what the API said); the core carries them.
    package struct StoreRecord: Sendable, Equatable {
        package var kind: String
        package var name: String
        package var json: String
        package init(kind: String, name: String, json: String) {
            self.kind = kind
            self.name = name
            self.json = json
        }
    }

    /// What a sign-in keeps once its grant is saved, and not before (`recordsAfterSignIn`): the records, and the
    /// client whose grant they replace (its entries are removed once the new ones are kept).
    package struct RecordsAfterSignIn: Sendable, Equatable {
        package var records: [StoreRecord]
        package var replacing: ClientIdentity?
        package init(records: [StoreRecord], replacing: ClientIdentity? = nil) {
            self.records = records
            self.replacing = replacing
        }
    }
}
