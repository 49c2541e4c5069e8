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

extension Results {
    /// For `Results.subscribe` (`RealmSwiftSync`): the class these results select from and their
    /// filters as one query text (`TRUEPREDICATE` when there is none). Sorts and distinct steps
    /// do not change what a subscription matches and are left out.
    /// - Throws: ``Realm/Error`` `.invalidQuery` for results of values or over a collection
    ///   property, which cannot be subscribed to.
    package func subscriptionQuery() throws -> (className: String, query: String) {
        guard values == nil, base.query.collection == nil else {
            throw Realm.Error(.invalidQuery, "only results of all the objects of a class, filtered or not, can be subscribed to")
        }
        var predicates: [QueryPredicate] = []
        for case .filter(let input) in base.query.steps {
            do { predicates.append(try input.predicate()) } catch { throw Realm.Error(.invalidQuery, error.description) }
        }
        let all: QueryPredicate = predicates.isEmpty ? .constant(true) : predicates.count == 1 ? predicates[0] : .and(predicates)
        return (base.info.className, all.description)
    }
}
