import Foundation

/// Which changes of an object count for an observer: its own properties (all, or those named
/// by key paths) and, one link away, properties of the objects it links to (`dogs.name`; with
/// no key paths, every property of every object a link or list property points to).
struct ModificationCheck {
    let info: TableInfo
    /// Columns of the object's own properties that count.
    let ownCols: Set<UInt32>
    /// Link and list-of-objects properties followed: their index, target and target columns.
    let links: [(index: Int, target: TableInfo, cols: Set<UInt32>?)]

    /// The check of the objects a collection property (`index` of `owner`) holds; nil for values.
    init?(elementsOf owner: ObjectAccessor, index: Int, keyPaths: [String]?) {
        guard let t = owner.info.properties[index].kind.target else { return nil }
        self.init(info: owner.realm.tableInfo(t), realm: owner.realm, keyPaths: keyPaths)
    }

    init(info: TableInfo, realm: RealmInstance, keyPaths: [String]?) {
        self.info = info
        var own = Set<UInt32>()
        var links: [Int: (TableInfo, Set<UInt32>?)] = [:]
        let props = info.properties
        /// The class a property links to; linking objects only when a key path names them.
        func target(_ i: Int, backlinks: Bool = false) -> TableInfo? {
            let k = props[i].kind
            guard k.type == .link, backlinks || k.collection != .linkingObjects, let t = k.target else { return nil }
            return realm.tableInfo(t)
        }
        if let paths = keyPaths {
            for path in paths {
                let parts = path.split(separator: ".", maxSplits: 1).map(String.init)
                guard let i = info.classInfo.index(named: parts[0]) else {
                    strataTrap("Invalid key path '\(path)' for class '\(info.name)': '\(info.name)' has no property '\(parts[0])'")
                }
                if info.cols[i] != 0 { own.insert(info.cols[i]) }
                if parts.count == 2 {
                    guard let t = target(i, backlinks: true) else {
                        strataTrap("Invalid key path '\(path)' for class '\(info.name)': '\(parts[0])' is not a link")
                    }
                    let sub = parts[1].split(separator: ".").first.map(String.init) ?? parts[1]
                    guard sub == "*" || t.classInfo.index(named: sub) != nil else {
                        strataTrap("Invalid key path '\(path)': '\(t.name)' has no property '\(sub)'")
                    }
                    var cols = links[i]?.1 ?? []
                    if sub == "*" { cols.formUnion(t.cols.filter { $0 != 0 }) } else {
                        cols.insert(t.cols[t.classInfo.index(named: sub)!])
                    }
                    links[i] = (t, cols)
                }
            }
        } else {
            own = Set(info.cols.filter { $0 != 0 })
            for i in props.indices { if let t = target(i) { links[i] = (t, nil) } }
        }
        ownCols = own
        self.links = links.sorted { $0.key < $1.key }.map { ($0.key, $0.value.0, $0.value.1) }
    }

    /// Whether anything this check follows changed (a cheap first look).
    func anyTouched(_ ctx: ChangeContext) -> Bool {
        ctx.touched(info) || links.contains { ctx.touched($0.target) }
    }

    /// The keys of each followed link's target objects that changed in the columns that count.
    func changedTargets(_ ctx: ChangeContext) -> [Set<Int64>] {
        links.map { l in
            let c = ctx.changes(l.target)
            return Set(c.modified.filter { l.cols == nil || !$0.value.isDisjoint(with: l.cols!) }.keys)
        }
    }

    /// Whether object `key` (in the Realm's current version) changed in what counts.
    func isModified(_ key: Int64, _ ctx: ChangeContext, targets: [Set<Int64>]) -> Bool {
        if let cols = ctx.changes(info).modified[key], !cols.isDisjoint(with: ownCols) { return true }
        return !linksReachingChanges(key, ctx, targets: targets).isEmpty
    }

    /// The followed link properties (their indexes) through which object `key` reaches a
    /// target object that changed in what counts.
    func linksReachingChanges(_ key: Int64, _ ctx: ChangeContext, targets: [Set<Int64>]) -> [Int] {
        var found: [Int] = []
        for (n, l) in links.enumerated() where !targets[n].isEmpty {
            let a = ObjectAccessor(realm: ctx.realm, info: info, key: key)
            let p = info.properties[l.index]
            let kind = p.kind.collection
            if kind == .linkingObjects, let origin = p.originProperty, let i = l.target.classInfo.index(named: origin) {
                let owners = LinkingOwner(info: info, key: key, index: l.index, origin: l.target, originCol: l.target.cols[i])
                if owners.keys(in: ctx.realm).contains(where: targets[n].contains) { found.append(l.index) }
            } else if kind == .list || kind == .set || kind == .map {
                for i in 0..<a.listCount(l.index) {
                    if case .link(let k) = a.listGet(l.index, i), targets[n].contains(k) { found.append(l.index); break }
                }
            } else if case .link(let k) = a.get(l.index), targets[n].contains(k) {
                found.append(l.index)
            }
        }
        return found
    }
}

/// Observes a `Results` (or linking objects, through the results of their owner's backlinks):
/// the keys last told are compared with the keys now.
final class ResultsObserver<C>: NotificationObserver {
    let base: ResultsBase
    private let make: (ResultsBase) -> C
    private let block: (RealmCollectionChange<C>) -> Void
    private let check: ModificationCheck
    private var lastKeys: [Int64] = []
    /// The version lastKeys were read in.
    private var lastVersion: UInt64 = .max
    private var pending: RealmCollectionChange<C>?

    init(base: ResultsBase, keyPaths: [String]?, token: ObservationState, make: @escaping (ResultsBase) -> C,
         block: @escaping (RealmCollectionChange<C>) -> Void) {
        self.base = base
        self.make = make
        self.block = block
        check = ModificationCheck(info: base.info, realm: base.realm, keyPaths: keyPaths)
        super.init(token: token)
    }

    override func prepare(_ ctx: ChangeContext?) -> Bool {
        guard let ctx else {
            lastKeys = base.keys()
            lastVersion = base.realm.version
            pending = .initial(make(base))
            return true
        }
        // nothing read by these results changed: nothing to tell
        if !check.anyTouched(ctx) && !(base.followsLinks && base.realm.classes.contains { ctx.touched(base.realm.tableInfo($0.type)) }) {
            lastVersion = base.realm.version
            return false
        }
        let targets = check.changedTargets(ctx)
        let own = ctx.changes(base.info)
        var keys: [Int64] = []
        var d = IndexDiff()
        var mods: [Int] = []
        var followed = false
        // In proportion to the change: the results followed through the commit's changes of
        // their class (nothing they read lies elsewhere), the diff taken among the changed keys.
        // (lastKeys let go of, so that following moves the keys in place)
        var moved = lastKeys
        lastKeys = []
        if lastVersion == ctx.old.version, targets.allSatisfy(\.isEmpty),
           let f = base.following(&moved, changes: own, from: ctx.old) {
            let few = IndexDiff.ofFew(po: f.oldAt, pn: f.newAt)
            keys = moved
            d = few.diff
            mods = few.keptChanged.filter { check.isModified(keys[$0.new], ctx, targets: targets) }.map(\.new)
            followed = true
        }
        if !followed {
            keys = base.keys()
            d = IndexDiff.of(old: moved, new: keys) // (moved: the old keys, untouched)
            mods = d.kept.filter { check.isModified(keys[$0.new], ctx, targets: targets) }.map(\.new).sorted()
        }
        lastKeys = keys
        lastVersion = base.realm.version
        if d.deletions.isEmpty && d.insertions.isEmpty && mods.isEmpty { return false }
        pending = .update(make(base), deletions: d.deletions, insertions: d.insertions, modifications: mods)
        return true
    }

    override func deliver() {
        guard let p = pending else { return }
        pending = nil
        block(p)
    }
}

/// Observes a managed `List`: the core says which elements were deleted and inserted
/// (`strata_list_changes_get`); for a list of objects, the objects kept that changed are
/// modifications. When the list's object is deleted, every element is deleted, once.
final class ListObserver<C: ListBacked>: NotificationObserver {
    private let list: C
    private let owner: TableInfo
    private let key: Int64
    private let index: Int
    private let check: ModificationCheck?
    private let block: (RealmCollectionChange<C>) -> Void
    private var lastCount = 0
    private var ownerGone = false
    private var pending: RealmCollectionChange<C>?

    init(list: C, owner: ObjectAccessor, index: Int, keyPaths: [String]?, token: ObservationState,
         block: @escaping (RealmCollectionChange<C>) -> Void) {
        self.list = list
        self.owner = owner.info
        key = owner.key
        self.index = index
        self.block = block
        check = ModificationCheck(elementsOf: owner, index: index, keyPaths: keyPaths)
        super.init(token: token)
    }

    override func prepare(_ ctx: ChangeContext?) -> Bool {
        guard let ctx else {
            lastCount = list.count
            pending = .initial(list)
            return true
        }
        if ownerGone { return false }
        let oc = ctx.changes(owner)
        if oc.deleted.contains(key) {
            ownerGone = true
            pending = .update(list, deletions: Array(0..<lastCount), insertions: [], modifications: [])
            return lastCount > 0
        }
        var deleted: [Int] = [], inserted: [Int] = []
        if oc.modified[key]?.contains(owner.cols[index]) == true {
            do {
                (deleted, inserted) = try ctx.realm.currentTxn.listChanges(
                    since: ctx.old, table: owner.tableName, key: key, col: owner.cols[index])
            } catch {
                pending = .error(error)
                return true
            }
        }
        var mods: [Int] = []
        if let check, check.anyTouched(ctx) {
            let targets = check.changedTargets(ctx)
            let a = ObjectAccessor(realm: ctx.realm, info: owner, key: key)
            let ins = Set(inserted)
            for i in 0..<a.listCount(index) where !ins.contains(i) {
                if case .link(let k) = a.listGet(index, i), check.isModified(k, ctx, targets: targets) { mods.append(i) }
            }
        }
        lastCount = list.count
        if deleted.isEmpty && inserted.isEmpty && mods.isEmpty { return false }
        pending = .update(list, deletions: deleted, insertions: inserted, modifications: mods)
        return true
    }

    override func deliver() {
        guard let p = pending else { return }
        pending = nil
        block(p)
    }
}

/// Observes a `Map`: the entries last told (keys and stored values) are compared with the
/// entries now when the map's property changed; for a map of objects, keys whose object changed
/// in what counts are modifications. When the map's object is deleted, every key is deleted, once.
final class MapObserver<Key: _MapKey, Value: RealmCollectionValue>: NotificationObserver {
    private let map: Map<Key, Value>
    private let owner: TableInfo
    private let key: Int64
    private let index: Int
    private let check: ModificationCheck?
    private let block: (RealmMapChange<Map<Key, Value>>) -> Void
    private var last: [String: StoredValue] = [:]
    private var ownerGone = false
    private var pending: RealmMapChange<Map<Key, Value>>?

    init(map: Map<Key, Value>, owner: ObjectAccessor, index: Int, keyPaths: [String]?, token: ObservationState,
         block: @escaping (RealmMapChange<Map<Key, Value>>) -> Void) {
        self.map = map
        self.owner = owner.info
        key = owner.key
        self.index = index
        self.block = block
        check = ModificationCheck(elementsOf: owner, index: index, keyPaths: keyPaths)
        super.init(token: token)
    }

    /// The map's keys and stored values in `realm`'s current version.
    private func entries(_ realm: RealmInstance) throws -> [String: StoredValue] {
        let t = realm.table(owner)
        let col = owner.cols[index]
        var out: [String: StoredValue] = [:]
        for i in 0..<(try t.listCount(key, col)) { out[try t.mapKeyAt(key, col, i)] = try t.listGet(key, col, i) }
        return out
    }

    override func prepare(_ ctx: ChangeContext?) -> Bool {
        guard let ctx else {
            last = (try? entries(map.managed!.accessor.realm)) ?? [:]
            pending = .initial(map)
            return true
        }
        if ownerGone { return false }
        let oc = ctx.changes(owner)
        if oc.deleted.contains(key) {
            ownerGone = true
            pending = .update(map, deletions: last.keys.sorted().map { Key(_strataKey: $0) }, insertions: [], modifications: [])
            return !last.isEmpty
        }
        var now = last
        var deleted: [String] = [], inserted: [String] = [], modified: [String] = []
        if oc.modified[key]?.contains(owner.cols[index]) == true {
            do { now = try entries(ctx.realm) } catch {
                pending = .error(error)
                return true
            }
            deleted = last.keys.filter { now[$0] == nil }
            inserted = now.keys.filter { last[$0] == nil }
            modified = now.keys.filter { k in last[k].map { $0 != now[k]! } ?? false }
        }
        if let check, check.anyTouched(ctx) {
            let targets = check.changedTargets(ctx)
            let changedValues = Set(modified)
            for (k, v) in now where last[k] != nil && !changedValues.contains(k) {
                if case .link(let o) = v, check.isModified(o, ctx, targets: targets) { modified.append(k) }
            }
        }
        last = now
        if deleted.isEmpty && inserted.isEmpty && modified.isEmpty { return false }
        let keys = { (s: [String]) in s.sorted().map { Key(_strataKey: $0) } }
        pending = .update(map, deletions: keys(deleted), insertions: keys(inserted), modifications: keys(modified))
        return true
    }

    override func deliver() {
        guard let p = pending else { return }
        pending = nil
        block(p)
    }
}

/// Observes one object: its changed properties with old and new values, or its deletion
/// (after which the token is invalidated).
final class ObjectObserver<T: Object>: NotificationObserver {
    private let object: T
    private let info: TableInfo
    private let key: Int64
    private let cols: Set<UInt32>?
    /// Key paths through links (`"dogs.name"`): changes of the linked objects count as changes
    /// of the link property.
    private let linked: ModificationCheck?
    /// Linking objects properties a key path names (`"owners"`): an object that starts or stops
    /// linking here changes them.
    private let owners: [(index: Int, owners: LinkingOwner)]
    private let block: (ObjectChange<T>) -> Void
    private var pending: ObjectChange<T>?
    private var deleted = false

    init(object: T, keyPaths: [String]?, token: ObservationState, block: @escaping (ObjectChange<T>) -> Void) {
        let a = object.__accessor!
        self.object = object
        info = a.info
        key = a.key
        self.block = block
        cols = keyPaths.map { paths in
            Set(paths.map { path -> UInt32 in
                let name = String(path.split(separator: ".").first ?? "")
                guard let i = a.info.classInfo.index(named: name) else {
                    strataTrap("Invalid key path '\(path)' for class '\(a.info.name)': it has no property '\(name)'")
                }
                return a.info.cols[i]
            })
        }
        // (paths through links, lists and linking objects: "dogs.name", "owners.name")
        let through = keyPaths?.filter { path in
            guard path.contains("."), let first = path.split(separator: ".").first else { return false }
            return a.info.classInfo.index(named: String(first)) != nil
        } ?? []
        linked = through.isEmpty ? nil : ModificationCheck(info: a.info, realm: a.realm, keyPaths: through)
        let named = Set((keyPaths ?? []).compactMap { $0.split(separator: ".").first.map(String.init) })
        owners = a.info.properties.indices.compactMap { i -> (Int, LinkingOwner)? in
            let p = a.info.properties[i]
            guard named.contains(p.name), p.kind.collection == .linkingObjects, let t = p.kind.target,
                  let originName = p.originProperty else { return nil }
            let origin = a.realm.tableInfo(t)
            guard let oi = origin.classInfo.index(named: originName) else { return nil }
            return (i, LinkingOwner(info: a.info, key: a.key, index: i, origin: origin, originCol: origin.cols[oi]))
        }
        super.init(token: token)
        needsInitial = false // objects have no initial notification
    }

    override func prepare(_ ctx: ChangeContext?) -> Bool {
        guard let ctx, !deleted else { return false }
        let c = ctx.changes(info)
        if c.deleted.contains(key) {
            deleted = true
            pending = .deleted
            return true
        }
        let changed = c.modified[key] ?? []
        var viaLinks: Set<Int> = []
        if let linked, linked.anyTouched(ctx) {
            viaLinks = Set(linked.linksReachingChanges(key, ctx, targets: linked.changedTargets(ctx)))
        }
        for o in owners where !viaLinks.contains(o.index) {
            let c = ctx.changes(o.owners.origin)
            guard !c.inserted.isEmpty || !c.deleted.isEmpty || c.modified.values.contains(where: { $0.contains(o.owners.originCol) })
            else { continue }
            if o.owners.keys(in: ctx.realm) != ctx.oldOwners(o.owners) { viaLinks.insert(o.index) }
        }
        if changed.isEmpty && viaLinks.isEmpty { return false }
        var props: [PropertyChange] = []
        for (i, p) in info.properties.enumerated() where info.cols[i] != 0 || viaLinks.contains(i) {
            if info.cols[i] == 0 { // linking objects whose objects changed: told without values, as RealmSwift does
                props.append(PropertyChange(name: p.name, oldValue: nil, newValue: nil))
                continue
            }
            let own = changed.contains(info.cols[i]) && cols?.contains(info.cols[i]) != false
            guard own || viaLinks.contains(i) else { continue }
            let old = own && !ctx.local ? ctx.oldValue(info, key: key, index: i) : nil
            props.append(PropertyChange(name: p.name, oldValue: old, newValue: info.classInfo.value(of: object, p)))
        }
        if props.isEmpty { return false }
        pending = .change(object, props)
        return true
    }

    override func deliver() {
        guard let p = pending else { return }
        pending = nil
        block(p)
        if case .deleted = p { token.invalidate() }
    }
}

/// Observes a whole Realm: told after each move to a newer version.
final class RealmObserver: NotificationObserver {
    private let realm: RealmInstance
    private let block: Realm.NotificationBlock
    private var pending: Realm.Notification?

    init(realm: RealmInstance, token: ObservationState, block: @escaping Realm.NotificationBlock) {
        self.realm = realm
        self.block = block
        super.init(token: token)
        needsInitial = false
    }

    override func prepare(_ ctx: ChangeContext?) -> Bool {
        guard ctx != nil else { return false }
        pending = .didChange
        return true
    }

    func prepareRefreshRequired() { pending = .refreshRequired }

    override func deliver() {
        guard let p = pending else { return }
        pending = nil
        block(p, Realm(realm))
    }
}
