import Foundation

/// Frozen Realms, objects and collections: one version kept while others commit, readable from
/// any thread (the `Sendable` way to hand data to another thread or task), never written.
/// `thaw()` finds the live counterpart in the calling thread's Realm.
extension RealmInstance {
    /// The frozen Realm of the version this Realm reads (one per version, shared).
    func frozenRealm() -> RealmInstance {
        if isFrozen { return self }
        checkThread("freeze")
        if isInWriteTransaction {
            strataTrap("Cannot freeze a Realm, object or collection inside a write transaction "
                       + "('\(configuration.path)'): freeze before the write or after it commits")
        }
        let key = "\(version)|" + classes.map { "\(ObjectIdentifier($0.type))" }.joined(separator: ",")
        do {
            return try shared.frozenRealm(key) {
                RealmInstance(snapshotOf: self, txn: try CoreTxn(cloneOf: currentTxn))
            }
        } catch {
            strataTrap("cannot freeze '\(configuration.path)': \(error)")
        }
    }

    /// The live Realm of this file on the calling thread.
    func liveRealm() -> RealmInstance {
        if !isFrozen { return self }
        do { return try RealmCache.instance(for: configuration) } catch {
            strataTrap("cannot open '\(configuration.path)' to thaw: \(error)")
        }
    }
}

extension Realm {
    /// A frozen Realm of the version this one reads: its objects and results keep their values
    /// while others commit, and may be read from any thread. It cannot write or refresh.
    public func freeze() -> Realm { Realm(instance.frozenRealm()) }

    /// Whether this Realm is frozen.
    public var isFrozen: Bool { instance.isFrozen }

    /// The live Realm of the same file on the calling thread.
    public func thaw() -> Realm { Realm(instance.liveRealm()) }
}

extension _TypedObject where Self: Object {
    /// A frozen copy of this managed object: the values of the version its Realm reads now,
    /// kept while others commit, readable from any thread. A frozen object stays frozen.
    public func freeze() -> Self {
        guard let a = __accessor else {
            strataTrap("Only objects which are managed by a Realm can be frozen (\(Self.className())).")
        }
        if a.realm.isFrozen { return self }
        a.trapIfDeleted("freeze \(Self.className())")
        return a.realm.frozenRealm().sameObject(Self.self, as: a)
    }

    /// The live object in the calling thread's Realm, or nil when it was deleted since.
    public func thaw() -> Self? {
        guard let a = __accessor else {
            strataTrap("Unmanaged objects cannot be thawed (\(Self.className())).")
        }
        if !a.realm.isFrozen { return self }
        let live = a.realm.liveRealm()
        guard (try? live.table(a.info).exists(a.key)) == true else { return nil }
        return live.sameObject(Self.self, as: a)
    }
}

extension Object {
    /// Whether this object is frozen (read from a frozen Realm).
    public var isFrozen: Bool { __accessor?.realm.isFrozen ?? false }
}

extension Results {
    /// Frozen results: the objects of the version the Realm reads now, from any thread.
    public func freeze() -> Results<Element> {
        if isFrozen { return self }
        return Results(base: base.rebound(to: base.realm.frozenRealm()))
    }

    /// The same query, live, in the calling thread's Realm.
    public func thaw() -> Results<Element>? {
        if !isFrozen { return self }
        return Results(base: base.rebound(to: base.realm.liveRealm()))
    }
}

extension List {
    /// Whether the list is of a frozen object.
    public var isFrozen: Bool { managed?.accessor.realm.isFrozen ?? false }

    /// The list of the frozen copy of its object.
    public func freeze() -> List<Element> { frozenCopy }

    /// The live list in the calling thread's Realm, or nil when its object was deleted.
    public func thaw() -> List<Element>? { thawedCopy }
}

extension LinkingObjects {
    /// Whether these are linking objects of a frozen object.
    public var isFrozen: Bool { realm?.isFrozen ?? false }

    /// The linking objects as the version read now has them, readable from any thread.
    public func freeze() -> LinkingObjects<Element> {
        guard let r = _strataResults else {
            strataTrap("Only linking objects of an object managed by a Realm can be frozen (LinkingObjects<\(Element.className())>).")
        }
        if isFrozen { return self }
        return LinkingObjects(results: r.freeze(), owner: owner)
    }

    /// The live linking objects in the calling thread's Realm.
    public func thaw() -> LinkingObjects<Element>? {
        guard let r = _strataResults else { return nil }
        if !isFrozen { return self }
        let live = r.base.realm.liveRealm()
        if let owner, (try? live.table(live.tableInfo(owner.info.classInfo.type)).exists(owner.key)) != true { return nil }
        return r.thaw().map { LinkingObjects(results: $0, owner: owner) }
    }
}
