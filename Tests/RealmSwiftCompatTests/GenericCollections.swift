// Code generic over RealmSwift's collection protocol, in RealmSwift's spelling only (issue 50):
// it must compile unchanged and work for collections of objects and of values alike.
import Foundation
import RealmSwift

/// How many elements of any Realm collection match a query.
func matching<C: RealmCollection>(_ c: C, _ q: String) -> Int { c.filter(q).count }

/// The largest value of any collection of values with an order.
func biggest<C: RealmCollection>(_ c: C) -> C.Element? where C.Element: MinMaxType { c.max() }

/// The smallest and the total of any collection of summable values.
func smallestAndTotal<C: RealmCollection>(_ c: C) -> (C.Element?, C.Element) where C.Element: MinMaxType & AddableType {
    (c.min(), c.sum())
}

/// The index of the first match, sorted and distinct copies, and aggregates by property name, on
/// any collection.
func summary<C: RealmCollection>(_ c: C, query: String, keyPath: String) -> (first: Int?, sorted: Int, distinct: Int) {
    (c.index(matching: query), c.sorted(byKeyPath: keyPath, ascending: false).count, c.distinct(by: [keyPath]).count)
}

/// The total of an int property over any collection of objects.
func total<C: RealmCollection>(_ c: C, of property: String) -> Int { c.sum(ofProperty: property) }

/// Any collection of tasks, observed and frozen through one type.
func anyTasks(_ owner: Owner, useList: Bool) -> AnyRealmCollection<TodoTask> {
    useList ? AnyRealmCollection(owner.tasks) : AnyRealmCollection(owner.realm!.objects(TodoTask.self))
}

/// Observes a collection of objects for changes to one property, with a Swift key path.
func observeTitles(_ tasks: List<TodoTask>, _ onChange: @escaping (Int) -> Void) -> NotificationToken {
    tasks.observe(keyPaths: [\TodoTask.title]) { change in
        if case .update(_, _, _, let modifications) = change { onChange(modifications.count) }
    }
}
