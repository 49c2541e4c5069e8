import Foundation
import RealmStorage

/// A persisted type, with the type its values are stored as (itself; an optional's is its
/// wrapped type's). The value operations of collections are constrained on it, as in RealmSwift:
/// `list.min()` exists where `Element.PersistedType: MinMaxType`.
public protocol _HasPersistedType {
    /// The type values are stored as: the type itself unless a conformance says otherwise.
    associatedtype PersistedType = Self
}

/// Types with an order for `min()` and `max()`: integers, `Float`, `Double`, `Date`, `Decimal128`.
public protocol MinMaxType {}

/// Types that can be summed and averaged: integers, `Float`, `Double`, `Decimal128`.
public protocol AddableType {}

/// Types collections of values can be sorted by: the ``MinMaxType``s, `String`, `Bool`, `Data`,
/// `UUID` and `ObjectId`.
public protocol SortableType {}

extension Bool: _HasPersistedType, SortableType {}
extension Int: _HasPersistedType, MinMaxType, AddableType, SortableType {}
extension Int8: _HasPersistedType, MinMaxType, AddableType, SortableType {}
extension Int16: _HasPersistedType, MinMaxType, AddableType, SortableType {}
extension Int32: _HasPersistedType, MinMaxType, AddableType, SortableType {}
extension Int64: _HasPersistedType, MinMaxType, AddableType, SortableType {}
extension Float: _HasPersistedType, MinMaxType, AddableType, SortableType {}
extension Double: _HasPersistedType, MinMaxType, AddableType, SortableType {}
extension Decimal128: _HasPersistedType, MinMaxType, AddableType, SortableType {}
extension Date: _HasPersistedType, MinMaxType, SortableType {}
extension String: _HasPersistedType, SortableType {}
extension Data: _HasPersistedType, SortableType {}
extension UUID: _HasPersistedType, SortableType {}
extension ObjectId: _HasPersistedType, SortableType {}

extension Optional: _HasPersistedType where Wrapped: _HasPersistedType {
    /// The type stored for an optional: the wrapped type's (a nullable column).
    public typealias PersistedType = Wrapped.PersistedType
}

/// A mixed value is its own persisted type; like RealmSwift, its collections and properties take
/// every value operation and aggregate (values of other kinds are skipped, see Spec/QUERY.md).
extension AnyRealmValue: _HasPersistedType, MinMaxType, AddableType, SortableType {}
