import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

// A note whose body has a full-text index, and the same class before the index existed.
enum FTV1 {
    final class Note: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var body = ""
        @Persisted var title: String?
    }
}

enum FTV2 {
    final class Note: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted(indexed: .fullText) var body = ""
        @Persisted(indexed: .fullText) var title: String?
    }
}

/// Full-text search (beyond RealmSwift): `@Persisted(indexed: .fullText)`, `TEXT` in predicate
/// strings and `fullTextMatches` in typed queries, checked against a brute-force matcher written
/// here with Foundation's folding; live results, an index added by a schema change.
@Suite("Full-text search: TEXT, fullTextMatches and the word index")
struct FullTextTests {
    static let vocabulary = ["Swift", "swift", "SWIFTLY", "Objective-C", "objc", "Linux", "café", "Cafe",
                             "data", "database", "Data-base", "Realm", "realms", "Straße", "naïve", "über",
                             "uber", "東京", "京都", "x1", "x12", "2026"]

    /// Words as the brute force sees them: runs of letters and digits, case and diacritics
    /// folded by Foundation (ß folded to ss by hand: Foundation keeps it), CJK characters alone.
    static func words(_ s: String) -> [String] {
        var out: [String] = []
        var cur = ""
        for ch in s.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .replacingOccurrences(of: "ß", with: "ss") {
            let cjk = ch.unicodeScalars.allSatisfy { (0x4E00...0x9FFF).contains($0.value) }
            if cjk || !(ch.isLetter || ch.isNumber) {
                if !cur.isEmpty { out.append(cur) }
                cur = ""
                if cjk { out.append(String(ch)) }
            } else {
                cur.append(ch)
            }
        }
        if !cur.isEmpty { out.append(cur) }
        return out
    }

    static func bruteMatch(_ text: String?, _ terms: String) -> Bool {
        guard let text else { return false }
        let have = words(text)
        for raw in terms.split(separator: " ") {
            var term = Substring(raw)
            let exclude = term.hasPrefix("-")
            if exclude { term = term.dropFirst() }
            let prefix = term.hasSuffix("*")
            if prefix { term = term.dropLast() }
            let want = words(String(term))
            var found = false
            if want.count <= have.count {
                for i in 0...(have.count - want.count) where !found {
                    found = want.indices.allSatisfy { k in
                        prefix && k == want.count - 1 ? have[i + k].hasPrefix(want[k]) : have[i + k] == want[k]
                    }
                }
            }
            if found == exclude { return false }
        }
        return true
    }

    static func randomText(_ rng: inout SystemRandomNumberGenerator) -> String {
        (0..<Int.random(in: 1...8, using: &rng)).map { _ in vocabulary.randomElement(using: &rng)! }
            .joined(separator: [" ", ", ", " (", ") ", "/"].randomElement(using: &rng)!)
    }

    static func randomTerms(_ rng: inout SystemRandomNumberGenerator) -> String {
        (0..<Int.random(in: 1...3, using: &rng)).enumerated().map { i, _ in
            var w = vocabulary.randomElement(using: &rng)!
            if i > 0 && Int.random(in: 0..<3, using: &rng) == 0 { w = "-" + w }
            if Int.random(in: 0..<4, using: &rng) == 0 { w = String(w.prefix(3)) + "*" }
            return w
        }.joined(separator: " ")
    }

    @Test func queriesAgreeWithABruteForceMatcher() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: [FTV2.Note.self]))
        var rng = SystemRandomNumberGenerator()
        var texts: [Int: (String, String?)] = [:]
        try realm.write {
            for id in 0..<400 {
                let note = FTV2.Note()
                note.id = id
                note.body = Self.randomText(&rng)
                note.title = id % 9 == 0 ? nil : Self.randomText(&rng)
                texts[id] = (note.body, note.title)
                realm.add(note)
            }
        }
        #expect(realm.schema["Note"]?.properties.first { $0.name == "body" }?.isFullTextIndexed == true)
        for _ in 0..<120 {
            let terms = Self.randomTerms(&rng)
            let want = texts.filter { Self.bruteMatch($0.value.0, terms) }.map(\.key).sorted()
            let typed = realm.objects(FTV2.Note.self).where { $0.body.fullTextMatches(terms) }.map(\.id).sorted()
            let text = realm.objects(FTV2.Note.self).filter("body TEXT %@", terms).map(\.id).sorted()
            #expect(typed == want, "TEXT '\(terms)'")
            #expect(text == want, "TEXT '\(terms)' as a predicate string")
            let wantTitle = texts.filter { Self.bruteMatch($0.value.1, terms) }.map(\.key).sorted()
            let title = realm.objects(FTV2.Note.self).where { $0.title.fullTextMatches(terms) }.map(\.id).sorted()
            #expect(title == wantTitle, "title TEXT '\(terms)' (optional)")
        }
        // combined with other terms
        let both = realm.objects(FTV2.Note.self).where { $0.body.fullTextMatches("swift") && $0.id < 100 }
        #expect(Array(both.map(\.id)) == texts.filter { $0.key < 100 && Self.bruteMatch($0.value.0, "swift") }
            .map(\.key).sorted())
    }

    @Test func liveResultsFollowEdits() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: [FTV2.Note.self]))
        let found = realm.objects(FTV2.Note.self).filter("body TEXT 'realm* -objc'")
        #expect(found.isEmpty)
        try realm.write {
            realm.add(FTV2.Note(value: ["id": 1, "body": "Realm on Linux"]))
            realm.add(FTV2.Note(value: ["id": 2, "body": "realms and objc"]))
        }
        #expect(Array(found.map(\.id)) == [1])
        try realm.write { realm.object(ofType: FTV2.Note.self, forPrimaryKey: 2)!.body = "realms in Swift" }
        #expect(Array(found.map(\.id)) == [1, 2])
        try realm.write { realm.delete(realm.object(ofType: FTV2.Note.self, forPrimaryKey: 1)!) }
        #expect(Array(found.map(\.id)) == [2])
    }

    @Test func aTermWithoutAWordTrapsNamingIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            let realm = try Realm(configuration: config(dir, types: [FTV2.Note.self]))
            _ = realm.objects(FTV2.Note.self).where { $0.body.fullTextMatches("swift -") }.count
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("TEXT 'swift -'") && text.contains("the term '-' has no word"))
    }

    @Test func anIndexIsAddedToExistingObjects() throws {
        let dir = TempDir()
        do {
            let realm = try Realm(configuration: config(dir, types: [FTV1.Note.self]))
            try realm.write {
                for id in 0..<300 { realm.add(FTV1.Note(value: ["id": id, "body": id % 3 == 0 ? "Über Straße" : "plain text"])) }
            }
        }
        let realm = try Realm(configuration: config(dir, types: [FTV2.Note.self], version: 1))
        #expect(realm.objects(FTV2.Note.self).where { $0.body.fullTextMatches("uber strasse") }.count == 100)
        #expect(realm.schema["Note"]?.properties.first { $0.name == "body" }?.isFullTextIndexed == true)
        let txn = try CoreTxn(db: realm.instance.shared.db, write: false)
        defer { txn.free() }
        let info = try txn.table("Note")!.properties().first { $0.name == "body" }!
        #expect(info.flags.contains(.fullText) && !info.flags.contains(.indexed))
    }
}
