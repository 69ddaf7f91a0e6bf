import Foundation

/// The `Object` subclasses linked into the program, found once per process by reading the Swift
/// type descriptors the compiler emits into every image (the `swift5_type_metadata` section),
/// so that `Realm()` needs no list of classes. A descriptor is a class (kind 16 in its flags)
/// with its name at +8 and its parent context at +4 (relative offsets); the class is then looked
/// up by its mangled-free name, "Module.Name", and kept if it is a subclass of `Object` with a
/// `@Persisted` property. Nested classes (parent not a module) are found when a found class
/// links to them; others are named in `objectTypes`. A record that is not a direct reference (low bits set) is skipped too.
enum ClassDiscovery {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var found: [Object.Type]?

    static func allObjectClasses() throws -> [Object.Type] {
        lock.lock()
        defer { lock.unlock() }
        if let f = found { return f }
        var names: [String] = []
        forEachTypeDescriptorName { names.append($0) }
        var types: [Object.Type] = []
        var seen = Set<ObjectIdentifier>()
        for n in names {
            guard let t = _typeByName(n) as? Object.Type, t != Object.self,
                  seen.insert(ObjectIdentifier(t)).inserted,
                  !ClassInfo.of(t).properties.isEmpty else { continue }
            types.append(t)
        }
        // Classes reached through links and lists are models too, nested ones included (the
        // scan names only classes at a module's top level).
        var i = 0
        while i < types.count {
            for p in ClassInfo.of(types[i]).properties {
                if let target = p.kind.target, seen.insert(ObjectIdentifier(target)).inserted { types.append(target) }
            }
            i += 1
        }
        found = types
        return types
    }

#if os(Linux) || os(Android) || os(FreeBSD)
    private struct SectionRange { var start: UInt; var length: UInt }
    /// The runtime's `MetadataSections` (version 1 and later start the same way).
    private struct MetadataSections {
        var version: UInt
        var baseAddress: UnsafeRawPointer?
        var unused0: UnsafeRawPointer?
        var unused1: UnsafeRawPointer?
        var protocols: SectionRange
        var protocolConformances: SectionRange
        var typeMetadata: SectionRange
    }

    @_silgen_name("swift_enumerateAllMetadataSections")
    private static func enumerateSections(
        _ body: @convention(c) (UnsafeRawPointer, UnsafeMutableRawPointer?) -> Bool,
        _ context: UnsafeMutableRawPointer?)

    private final class Collector { var names: [String] = [] }

    private static func forEachTypeDescriptorName(_ body: (String) -> Void) {
        let c = Collector()
        withExtendedLifetime(c) {
            enumerateSections({ sections, ctx in
                let c = Unmanaged<Collector>.fromOpaque(ctx!).takeUnretainedValue()
                let r = sections.assumingMemoryBound(to: MetadataSections.self).pointee.typeMetadata
                guard let start = UnsafeRawPointer(bitPattern: r.start) else { return true }
                ClassDiscovery.scan(start, Int(r.length)) { c.names.append($0) }
                return true
            }, Unmanaged.passUnretained(c).toOpaque())
        }
        c.names.forEach(body)
    }
#elseif canImport(Darwin)
    private static func forEachTypeDescriptorName(_ body: (String) -> Void) {
        for i in 0..<_dyld_image_count() {
            guard let header = _dyld_get_image_header(i) else { continue }
            var size: UInt = 0
            let raw = UnsafeRawPointer(header).assumingMemoryBound(to: mach_header_64.self)
            guard let data = getsectiondata(raw, "__TEXT", "__swift5_types", &size) else { continue }
            scan(UnsafeRawPointer(data), Int(size), body)
        }
    }
#else
    private static func forEachTypeDescriptorName(_ body: (String) -> Void) {}
#endif

    /// Each record of a type-metadata section is a 32-bit relative offset to a context
    /// descriptor (low 2 bits: 0 = direct).
    private static func scan(_ start: UnsafeRawPointer, _ length: Int, _ body: (String) -> Void) {
        var p = start
        let end = start + length
        while p < end {
            defer { p += 4 }
            let rel = p.load(as: Int32.self)
            guard rel & 3 == 0 else { continue }
            let desc = p + Int(rel)
            guard desc.load(as: UInt32.self) & 0x1F == 16 else { continue } // a class
            // The parent is a relative indirectable pointer: low bit set = through a pointer.
            let parentRel = (desc + 4).load(as: Int32.self)
            guard parentRel != 0 else { continue }
            var parent = desc + 4 + Int(parentRel & ~1)
            if parentRel & 1 != 0 {
                guard let target = parent.loadUnaligned(as: UnsafeRawPointer?.self) else { continue }
                parent = target
            }
            guard parent.load(as: UInt32.self) & 0x1F == 0 else { continue } // in a module
            body("\(string(at: parent + 8)).\(string(at: desc + 8))")
        }
    }

    private static func string(at field: UnsafeRawPointer) -> String {
        let rel = field.load(as: Int32.self)
        return String(cString: (field + Int(rel)).assumingMemoryBound(to: CChar.self))
    }
}
