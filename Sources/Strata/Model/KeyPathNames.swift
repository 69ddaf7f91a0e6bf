import Foundation

/// Which persisted properties a key path like `\Dog.name` or `\Dog.owner?.name` reads: an
/// unmanaged object of the class is read through the key path with a probe set; each
/// `@Persisted` field read is recorded by its offset in its class's schema, and a to-one link read
/// while probing hands out a probing object of its target class, so the path goes on through it.
/// Remembered per key path.
public final class _KeyPathProbe {
    /// The fields read, in order: the object's class and the field's offset.
    var steps: [(type: Object.Type, offset: Int)] = []
    /// The object the last link read handed out: the next read must be of it (else the key
    /// path is no chain of properties: a computed property reading several fields).
    private var handedOut: ObjectIdentifier?
    /// The object the last link read handed out (kept while the probe lives).
    private(set) var lastHandedOut: Object?
    var isChain = true

    @usableFromInline
    func saw<T>(_ object: Object, _ field: inout T) {
        if !steps.isEmpty && ObjectIdentifier(object) != handedOut { isChain = false }
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        let offset = withUnsafeMutablePointer(to: &field) { UnsafeMutableRawPointer($0) - base }
        steps.append((type(of: object), offset))
        handedOut = nil
    }

    /// For a to-one link read while probing: a probing object of the target class, as `V`; for
    /// a collection of objects, a collection whose elements are probing objects (`\.dogs[0].name`
    /// reads "dogs.name").
    @usableFromInline
    func linked<V: _Persistable>(_: V.Type) -> V? {
        let kind = V._strataKind
        guard kind.type == .link, let target = kind.target else { return nil }
        if kind.collection != .none {
            handedOut = nil
            return (V.self as? _ProbingCollection.Type)?._strataProbing(self) as? V
        }
        return object(of: target, as: V.self)
    }

    /// An element of a collection read while probing: a probing object of its class, or nil
    /// for values.
    func element<E: RealmCollectionValue>(_: E.Type) -> E? {
        guard let target = E._strataElementKind.target else { return nil }
        return object(of: target, as: E.self)
    }

    private func object<V>(of target: Object.Type, as: V.Type) -> V? {
        // a type mapped to an embedded object ends the path (its mapping reads the object)
        let wrapped = (V.self as? _OptionalMetatype.Type)?.wrappedType ?? V.self
        if wrapped is any _CustomPersistable.Type { return nil }
        let o = target.init()
        o.__probe = self
        handedOut = ObjectIdentifier(o)
        lastHandedOut = o
        return ValueConversion.convert(o, to: V.self)
    }
}

/// A collection of objects that can stand in a key path being probed (`\.dogs[0].name`).
protocol _ProbingCollection {
    static func _strataProbing(_ probe: _KeyPathProbe) -> Any
}

enum KeyPathNames {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var names: [AnyKeyPath: String] = [:]

    /// The property name `keyPath` reads (a `@Persisted` property of `Root`, or a chain of them
    /// through to-one links: "owner.name").
    static func name<Root: Object>(_ keyPath: PartialKeyPath<Root>) -> String {
        name(keyPath, of: Root.self)
    }

    /// The same, for a key path whose root is the model class `model`. `throughComputed`: a key
    /// path that goes on past its last persisted property into computed ones (a projection's
    /// `\.lastName.uppercased`, `\.friends.projectTo.firstName`) names the persisted part.
    /// `wrap`: the key path's root is not the model but what `wrap` makes of an object of it (a
    /// projection of the object: its key paths read the object's).
    static func name(_ keyPath: AnyKeyPath, of model: Object.Type, throughComputed: Bool = false,
                     wrap: ((Object) -> Any)? = nil) -> String {
        if let n = cached(keyPath) { return n }
        let (probe, object, result) = probed(keyPath, of: model, wrap: wrap)
        // A field holding an instance (`let x = RealmProperty<…>()`) is read without running any
        // code of Strata's: it is found as the field of the last object that holds that instance.
        var instanceField = false
        if let instance = result as? AnyObject, !(instance is Object) {
            let holder = probe.steps.isEmpty ? object : probe.lastHandedOut
            if let holder, let p = ClassInfo.instanceField(of: holder, holding: instance) {
                probe.steps.append((type(of: holder), p.offset))
                instanceField = true
            }
        }
        var parts: [String] = []
        var last: ClassInfo.PropertyInfo?
        for step in probe.steps {
            let info = ClassInfo.of(step.type)
            guard let i = info.index(atOffset: step.offset) else { parts = []; break }
            parts.append(info.properties[i].name)
            last = info.properties[i]
        }
        guard probe.isChain, let last, !parts.isEmpty, instanceField || last.field.valueType == unwrapped(type(of: keyPath).valueType)
                || last.field.valueType == type(of: keyPath).valueType else {
            if (throughComputed || wrap != nil) && !parts.isEmpty { return parts.joined(separator: ".") }
            strataTrap("\(model.className()): the key path \(keyPath) does not read @Persisted properties "
                       + "through to-one links (use the string form)")
        }
        let n = parts.joined(separator: ".")
        lock.lock()
        names[keyPath] = n
        lock.unlock()
        return n
    }

    /// Whether `keyPath` of `model` reads at least one @Persisted property (a projection's key
    /// path may go on into computed ones; one reading only unpersisted fields names nothing).
    static func readsStored(_ keyPath: AnyKeyPath, of model: Object.Type) -> Bool {
        if cached(keyPath) != nil { return true }
        return probed(keyPath, of: model, wrap: nil).probe.steps.contains {
            ClassInfo.of($0.type).index(atOffset: $0.offset) != nil
        }
    }

    /// The name found for `keyPath` before, if any.
    private static func cached(_ keyPath: AnyKeyPath) -> String? {
        lock.lock()
        defer { lock.unlock() }
        return names[keyPath]
    }

    /// Run `keyPath` on a probe object of `model` (or on what `wrap` makes of it): the probe
    /// records the fields it read.
    private static func probed(_ keyPath: AnyKeyPath, of model: Object.Type, wrap: ((Object) -> Any)?)
        -> (probe: _KeyPathProbe, object: Object, result: Any?) {
        let probe = _KeyPathProbe()
        let object = model.init()
        object.__probe = probe
        let result: Any? = wrap.map { $0(object)[keyPath: keyPath] } ?? object[keyPath: keyPath]
        object.__probe = nil
        return (probe, object, result)
    }

    /// `T` of `T?` (a key path through an optional link ends in an optional).
    private static func unwrapped(_ t: Any.Type) -> Any.Type {
        (t as? _OptionalMetatype.Type)?.wrappedType ?? t
    }
}

/// Tells `Optional<T>.self` from other types and gives `T`.
protocol _OptionalMetatype { static var wrappedType: Any.Type { get } }
extension Optional: _OptionalMetatype { static var wrappedType: Any.Type { Wrapped.self } }
