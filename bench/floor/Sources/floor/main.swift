import Foundation

print("Alice Example <alice@example.org>")
