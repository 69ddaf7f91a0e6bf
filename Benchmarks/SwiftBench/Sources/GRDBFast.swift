// GRDB at its fastest documented path, beside the idiomatic one (main.swift's `grdb`): the same
// database and workloads through cached prepared statements (`db.cachedStatement(sql:)`,
// `Row.fetchCursor` over a reused statement, columns read by index) instead of a request or a
// record type built per call. vs_grdb is printed against the faster of the two.
import Foundation
import GRDB

func grdbFast(_ rows: [Row], _ path: String) throws -> Engine {
    removeFiles(path)
    var r = Rates()
    let pool = try DatabasePool(path: path)
    try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    try pool.write { db in
        try db.execute(sql: """
            CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER NOT NULL,
                                 score DOUBLE NOT NULL, active BOOLEAN NOT NULL);
            CREATE INDEX person_on_name ON person(name);
            """)
    }
    let insertSQL = "INSERT INTO person (id, name, age, score, active) VALUES (?, ?, ?, ?, ?)"
    var t = now()
    try pool.write { db in
        let insert = try db.cachedStatement(sql: insertSQL)
        for row in rows { try insert.execute(arguments: [row.id, row.name, row.age, row.score, row.active]) }
    }
    r.insert = Double(rows.count) / (now() - t)
    t = now()
    for i in 0..<commits {
        try pool.write { db in
            try db.cachedStatement(sql: insertSQL).execute(arguments: [rows.count + i, "c\(i)", i % 100, 0.0, false])
        }
    }
    r.commit = Double(commits) / (now() - t)
    var sink = 0
    let objects = Double(try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM person") ?? 0 })
    func counting(_ sql: String) -> () throws -> Double {
        return {
            try pool.read { db in
                let s = try db.cachedStatement(sql: sql)
                return try rate(objects * Double(queryReps)) { for _ in 0..<queryReps { sink &+= try Int.fetchOne(s) ?? 0 } }
            }
        }
    }
    let one = counting("SELECT count(*) FROM person WHERE age > 50")
    let two = counting("SELECT count(*) FROM person WHERE age > 50 AND active = 1")
    let reads: [String: () throws -> Double] = [
        "lookup": {
            try pool.read { db in
                let s = try db.cachedStatement(sql: "SELECT id, name, age, score, active FROM person WHERE id = ?")
                return try rate(Double(lookups / 3)) {
                    for i in 0..<lookups / 3 {
                        let row = try GRDB.Row.fetchOne(s, arguments: [Int(rnd() % UInt64(rows.count))])!
                        let name: String = row[1], age: Int = row[2], score: Double = row[3], active: Bool = row[4]
                        let id: Int = row[0]
                        sink &+= id &+ name.utf8.count &+ age &+ Int(score) &+ (active ? 1 : 0) &+ i
                    }
                }
            }
        },
        "iterate": {
            try pool.read { db in
                let s = try db.cachedStatement(sql: "SELECT age FROM person")
                return try rate(objects * Double(passes)) {
                    for _ in 0..<passes {
                        let cursor = try Int.fetchCursor(s)
                        while let age = try cursor.next() { sink &+= age }
                    }
                }
            }
        },
        "count": {
            try pool.read { db in
                let s = try db.cachedStatement(sql: "SELECT count(*) FROM person")
                return try rate(Double(countReps)) { for _ in 0..<countReps { sink &+= try Int.fetchOne(s) ?? 0 } }
            }
        },
        "count_one": one, "count_two": two, "count_one_typed": one, "count_two_typed": two,
        "index_eq": {
            try pool.read { db in
                let s = try db.cachedStatement(sql: "SELECT count(*) FROM person WHERE name = ?")
                return try rate(Double(lookups / 3)) {
                    for _ in 0..<lookups / 3 { sink &+= try Int.fetchOne(s, arguments: [rows[Int(rnd() % UInt64(rows.count))].name]) ?? 0 }
                }
            }
        },
        "range_sort": {
            try pool.read { db in
                let s = try db.cachedStatement(sql: "SELECT age FROM person WHERE age BETWEEN 20 AND 30 ORDER BY name LIMIT 100")
                return try rate(Double(queryReps)) {
                    for _ in 0..<queryReps {
                        let cursor = try Int.fetchCursor(s)
                        while let age = try cursor.next() { sink &+= age }
                    }
                }
            }
        },
    ]
    return Engine(rates: r, reads: reads, close: { if sink == 42 { print("") } })
}
