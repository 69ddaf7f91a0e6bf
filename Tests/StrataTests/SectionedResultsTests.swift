import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

/// Sectioned results: sections against a plain-Swift grouping, and change sets that, applied to
/// the old sections as a table view applies them, give the new ones.
@Suite("Sectioned results: sections in one pass, change sets against a model")
struct SectionedResultsTests {
    static func dogs(_ realm: Realm, _ names: [String]) throws {
        try realm.write { for (i, n) in names.enumerated() { realm.add(Dog(value: ["name": n, "age": i])) } }
    }

    /// The sections a plain-Swift grouping makes: names sorted, grouped by first letter.
    static func model(_ names: [String]) -> [[String]] {
        var out: [(String, [String])] = []
        for n in names.sorted() {
            let k = String(n.prefix(1))
            if let i = out.firstIndex(where: { $0.0 == k }) { out[i].1.append(n) } else { out.append((k, [n])) }
        }
        return out.map(\.1)
    }

    static func layout(_ s: SectionedResults<String, Dog>) -> [[String]] { s.map { $0.map(\.name) } }

    @Test func sectionsKeysSubscriptsAndIteration() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        try Self.dogs(realm, ["cake", "apple", "box", "banana", "cat", "ant"])
        let s = realm.objects(Dog.self).sectioned(sortDescriptors: [SortDescriptor(keyPath: "name")]) { String($0.name.prefix(1)) }
        #expect(s.allKeys == ["a", "b", "c"])
        #expect(s.count == 3)
        #expect(Self.layout(s) == [["ant", "apple"], ["banana", "box"], ["cake", "cat"]])
        #expect(s[1].key == "b" && s[1].id == "b" && s[1].count == 2)
        #expect(s[IndexPath(item: 1, section: 2)].name == "cat")
        // By a key path, descending: one section per value.
        let byAge = realm.objects(Dog.self).sectioned(by: \.age, ascending: false)
        #expect(byAge.allKeys == [5, 4, 3, 2, 1, 0])
        // Live: a commit moves the sections on.
        try realm.write { realm.add(Dog(value: ["name": "zebra"])) }
        #expect(s.allKeys == ["a", "b", "c", "z"])
        let b = s[1]
        try realm.write { realm.delete(realm.objects(Dog.self).filter("name BEGINSWITH 'b'")) }
        #expect(b.count == 0 && s.allKeys == ["a", "c", "z"]) // a section is bound to its key
        // Frozen: stays at its version, readable on another thread.
        let frozen = s.freeze()
        try realm.write { realm.add(Dog(value: ["name": "apricot"])) }
        #expect(frozen.isFrozen && Self.layout(frozen) == [["ant", "apple"], ["cake", "cat"], ["zebra"]])
        let fromThread = Locked<[[String]]>([])
        let handed = Unchecked(frozen) // (frozen: readable from any thread)
        let t = Thread { fromThread.set(Self.layout(handed.value)) }
        t.start()
        while fromThread.get().isEmpty { usleep(1000) }
        #expect(fromThread.get() == Self.layout(frozen))
        #expect(Self.layout(frozen.thaw()!) == [["ant", "apple", "apricot"], ["cake", "cat"], ["zebra"]])
    }

    /// Sorted by name (the key follows the sort), or by age (a rename moves an element to
    /// another section without moving it in the sorted results, and sections change order).
    @Test(arguments: ["name", "age"])
    func changeSetsApplyToTheOldSectionsToGiveTheNewOnes(sortedBy sortKey: String) throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        var rng = SystemRandomNumberGenerator()
        let letters = Array("abcdefg")
        func name() -> String { String((0..<3).map { _ in letters.randomElement(using: &rng)! }) }
        try Self.dogs(realm, (0..<40).map { _ in name() })
        let sectioned = realm.objects(Dog.self).sectioned(sortDescriptors: [SortDescriptor(keyPath: sortKey)]) {
            String($0.name.prefix(1))
        }
        // The sections a plain-Swift grouping of the sorted objects makes (first appearance).
        func model() -> [[String]] {
            var out: [(String, [String])] = []
            for n in realm.objects(Dog.self).sorted(byKeyPath: sortKey).map(\.name) {
                let k = String(n.prefix(1))
                if let i = out.firstIndex(where: { $0.0 == k }) { out[i].1.append(n) } else { out.append((k, [n])) }
            }
            return out.map(\.1)
        }
        func ids(_ s: SectionedResults<String, Dog>) -> [[String]] { s.map { $0.map(\.name) } }
        var shown: [[String]] = []
        var updates = 0
        let token = sectioned.observe { change in
            switch change {
            case .initial(let s): shown = ids(s)
            case .update(let s, let del, let ins, let mod, let secIns, let secDel):
                updates += 1
                // Apply as a table view does: deletions (old paths, descending) and deleted
                // sections, then inserted sections and insertions (new paths, ascending).
                var t = shown
                for p in del.sorted(by: >) { t[p.section].remove(at: p.item) }
                for sec in secDel.sorted(by: >) { t.remove(at: sec) }
                let now = ids(s)
                for sec in secIns.sorted() { t.insert([], at: sec) }
                for p in ins.sorted() { t[p.section].insert(now[p.section][p.item], at: p.item) }
                for p in mod { t[p.section][p.item] = now[p.section][p.item] }
                #expect(t == now, "applying the change set gives the new sections")
                #expect(now == model(), "the sections a plain grouping makes")
                shown = now
            }
        }
        realm.refresh()
        #expect(shown == model())
        for _ in 0..<60 {
            try realm.write {
                let all = realm.objects(Dog.self)
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    switch Int.random(in: 0..<3, using: &rng) {
                    case 0: realm.add(Dog(value: ["name": name(), "age": Int.random(in: 0..<1000, using: &rng)]))
                    case 1: if all.count > 0 { realm.delete(all[Int.random(in: 0..<all.count, using: &rng)]) }
                    default: if all.count > 0 { all[Int.random(in: 0..<all.count, using: &rng)].name = name() }
                    }
                }
            }
        }
        #expect(updates > 40)
        #expect(shown == model())
        token.invalidate()
    }

    @Test func aSectionObserverSeesOnlyItsSection() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        try Self.dogs(realm, ["apple", "banana", "box", "cake"])
        let sectioned = realm.objects(Dog.self).sectioned(sortDescriptors: [SortDescriptor(keyPath: "name")]) {
            String($0.name.prefix(1))
        }
        var aChanges: [SectionedResultsChange<ResultsSection<String, Dog>>] = []
        var cChanges = 0
        let ta = sectioned[0].observe { aChanges.append($0) }
        let tc = sectioned[2].observe { _ in cChanges += 1 }
        realm.refresh()
        try realm.write { realm.delete(realm.objects(Dog.self).filter("name == 'apple'")) }
        guard case .update(let section, let del, let ins, _, let secIns, let secDel)? = aChanges.last else {
            Issue.record("no update for section a")
            return
        }
        #expect(section.count == 0 && del.isEmpty && ins.isEmpty && secIns.isEmpty && secDel == [0])
        #expect(cChanges == 1) // only the initial delivery: section c did not change
        try realm.write { realm.add(Dog(value: ["name": "avocado"])) }
        guard case .update(_, _, let ins2, _, let secIns2, _)? = aChanges.last else { return }
        #expect(ins2 == [IndexPath(item: 0, section: 0)] && secIns2 == [0])
        ta.invalidate()
        tc.invalidate()
    }

    @Test func anElementThatChangesSectionIsDeletedAndInserted() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        try Self.dogs(realm, ["ant", "bee", "cow"])
        // Sorted by age (0, 1, 2), sectioned by the first letter: a rename moves a section.
        let sectioned = realm.objects(Dog.self).sectioned(sortDescriptors: [SortDescriptor(keyPath: "age")]) {
            String($0.name.prefix(1))
        }
        var last: SectionedResultsChange<SectionedResults<String, Dog>>?
        let token = sectioned.observe { last = $0 }
        realm.refresh()
        let bee = realm.objects(Dog.self).filter("name == 'bee'").first!
        try realm.write { bee.name = "cat" }
        guard case .update(let s, let del, let ins, let mod, let secIns, let secDel)? = last else {
            Issue.record("no update")
            return
        }
        #expect(s.allKeys == ["a", "c"])
        #expect(secDel == [1] && secIns.isEmpty)
        #expect(del.isEmpty) // its old section went away whole
        #expect(ins == [IndexPath(item: 0, section: 1)] && mod.isEmpty)
        token.invalidate()
    }
}
