import RealmSwift

// See PropertySiteModelsA.swift: `echo` shares its line and column (8, 5) with `SiteBase.shared`.
//
//
//
final class SiteDerived: SiteBase {
    @Persisted var echo = 3
    @Persisted var last = 4
}
