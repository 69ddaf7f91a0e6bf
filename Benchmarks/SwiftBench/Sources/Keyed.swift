// Keyed collections: one object's MutableSet<Int> and Map<String, Int> of S entries, against
// GRDB's join tables (the relational way to hold them: `bag_value(bag, value)` with a unique
// index, `bag_entry(bag, key, value)` keyed by (bag, key)), each queried through a cached
// statement, GRDB's fastest documented path:
//   set_contains  `set.contains(v)` for random values, half of them held (lookups per second)
//   map_lookup    `map["k…"]` for random keys, half of them held (lookups per second)
// Output: `bench-swift <workload> size=<S> strata=<per s> grdb=<per s> vs_grdb=<x>`.
import Foundation
import GRDB
import Strata

final class Bag: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var values: MutableSet<Int>
    @Persisted var entries: Map<String, Int>
}

/// Lookups per second of `body` over `count` random probes (the best of three slices).
private func bestRate(_ count: Int, _ body: (Int) throws -> Int) rethrows -> Double {
    var best = 0.0, sink = 0
    for _ in 0..<3 {
        let t = now()
        for _ in 0..<count { sink &+= try body(Int(rnd() % UInt64(2 * count))) }
        best = max(best, Double(count) / (now() - t))
    }
    if sink == -1 { print("") }
    return best
}

func keyedBench(size: Int, probes: Int, dir: String) throws {
    // Strata: one object holding both collections (even values and keys: half the probes miss)
    let path = dir + "/keyed.realm"
    removeFiles(path)
    var strata: (set: Double, map: Double) = (0, 0)
    do {
        let realm = try Realm(configuration: .init(fileURL: URL(fileURLWithPath: path), objectTypes: [Bag.self]))
        let bag = Bag()
        try realm.write {
            realm.add(bag)
            for i in 0..<size {
                bag.values.insert(2 * i)
                bag.entries["k\(2 * i)"] = i
            }
        }
        strata.set = bestRate(probes) { bag.values.contains($0 % (2 * size)) ? 1 : 0 }
        strata.map = bestRate(probes) { bag.entries["k\($0 % (2 * size))"] ?? 0 }
    }
    removeFiles(path)
    // GRDB: the same entries in join tables
    let gpath = dir + "/keyed.sqlite"
    removeFiles(gpath)
    var grdb: (set: Double, map: Double) = (0, 0)
    do {
        let pool = try DatabasePool(path: gpath)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE bag (id INTEGER PRIMARY KEY)")
            try db.execute(sql: "CREATE TABLE bag_value (bag INTEGER NOT NULL REFERENCES bag(id), value INTEGER NOT NULL, UNIQUE (bag, value))")
            try db.execute(sql: "CREATE TABLE bag_entry (bag INTEGER NOT NULL REFERENCES bag(id), key TEXT NOT NULL, value INTEGER NOT NULL, PRIMARY KEY (bag, key)) WITHOUT ROWID")
            try db.execute(sql: "INSERT INTO bag (id) VALUES (0)")
            for i in 0..<size {
                try db.execute(sql: "INSERT INTO bag_value (bag, value) VALUES (0, ?)", arguments: [2 * i])
                try db.execute(sql: "INSERT INTO bag_entry (bag, key, value) VALUES (0, ?, ?)", arguments: ["k\(2 * i)", i])
            }
        }
        try pool.read { db in
            let contains = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM bag_value WHERE bag = 0 AND value = ?)")
            grdb.set = try bestRate(probes) { try Bool.fetchOne(contains, arguments: [$0 % (2 * size)]) == true ? 1 : 0 }
            let lookup = try db.cachedStatement(sql: "SELECT value FROM bag_entry WHERE bag = 0 AND key = ?")
            grdb.map = try bestRate(probes) { try Int.fetchOne(lookup, arguments: ["k\($0 % (2 * size))"]) ?? 0 }
        }
    }
    removeFiles(gpath)
    print(String(format: "bench-swift set_contains size=%d strata=%.0f grdb=%.0f vs_grdb=%.2f", size, strata.set, grdb.set, strata.set / grdb.set))
    print(String(format: "bench-swift map_lookup size=%d strata=%.0f grdb=%.0f vs_grdb=%.2f", size, strata.map, grdb.map, strata.map / grdb.map))
}
