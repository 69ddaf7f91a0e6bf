import Foundation

/// Which persisted property a key path like `\Dog.name` reads: an unmanaged object of the class
/// is read through the key path with a probe set, and the `@Persisted` field it touches is found
/// by its offset in the class's schema. Remembered per class and key path.
public final class _KeyPathProbe {
    var offset: Int?

    @usableFromInline
    func saw<T>(_ object: Object, _ field: inout T) {
        if offset != nil { return } // the first field read is the key path's
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        offset = withUnsafeMutablePointer(to: &field) { UnsafeMutableRawPointer($0) - base }
    }
}

enum KeyPathNames {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var names: [AnyKeyPath: String] = [:]

    /// The property name `keyPath` reads (a `@Persisted` property of `Root` read directly).
    static func name<Root: Object>(_ keyPath: PartialKeyPath<Root>) -> String {
        name(keyPath, of: Root.self)
    }

    /// The same, for a key path whose root is the model class `model`.
    static func name(_ keyPath: AnyKeyPath, of model: Object.Type) -> String {
        lock.lock()
        if let n = names[keyPath] {
            lock.unlock()
            return n
        }
        lock.unlock()
        let probe = _KeyPathProbe()
        let object = model.init()
        object.__probe = probe
        _ = object[keyPath: keyPath]
        object.__probe = nil
        let info = ClassInfo.of(model)
        guard let offset = probe.offset, let i = info.index(atOffset: offset),
              info.properties[i].field.valueType == type(of: keyPath).valueType else {
            strataTrap("\(model.className()): the key path \(keyPath) does not read a @Persisted property directly "
                       + "(use the string form for paths through links)")
        }
        let n = info.properties[i].name
        lock.lock()
        names[keyPath] = n
        lock.unlock()
        return n
    }
}
