import Foundation
import RealmQuery

/// Query text for sync subscriptions (`RealmSwiftSync`): a subscription travels to the server as
/// its query in the dialect of Spec/QUERY.md.
package enum SubscriptionQueryText {
    /// The text of a type-safe query on `T`.
    package static func text<T: Object>(_ type: T.Type, _ isIncluded: (Query<T>) -> Query<Bool>) -> String {
        Query<T>.root().predicate(of: isIncluded).description
    }

    /// The text of `format` with its `%@` and `%K` arguments put in.
    /// - Throws: ``Realm/Error`` `.invalidQuery` when the text does not parse.
    package static func text(_ format: String, _ args: [Any?]) throws -> String {
        do {
            return try QueryPredicate.parse(format, arguments: try QueryArguments.convert(args)).description
        } catch let e as QueryError {
            throw Realm.Error(.invalidQuery, e.description)
        }
    }
}
