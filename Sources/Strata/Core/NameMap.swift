import CCore

/// The public names of properties a file stores under other names (`propertiesMapping()`), as
/// the core's query compiler takes them (`strata_name_map`): predicate strings, sorts and
/// distincts name properties as the Swift classes do. Made whole, then only read (by queries
/// compiled on any thread).
final class NameMap {
    let handle: OpaquePointer

    /// The map of `classes`' renamed properties; nil when none is renamed.
    init?(_ classes: [ClassInfo]) throws {
        let renamed = classes.filter(\.hasColumnNames)
        if renamed.isEmpty { return nil }
        var h: OpaquePointer?
        try StrataError.check { strata_name_map_create(&h, $0) }
        handle = h!
        do {
            for c in renamed {
                for p in c.properties where p.columnName != p.name {
                    try StrataError.check { strata_name_map_add(handle, c.name, p.name, p.columnName, $0) }
                }
            }
        } catch {
            strata_name_map_free(handle)
            throw error
        }
    }

    deinit { strata_name_map_free(handle) }
}
