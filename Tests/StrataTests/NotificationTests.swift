import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

/// A thread that runs its run loop (as an app's thread does), and runs blocks on it.
final class LoopThread: @unchecked Sendable {
    private var loop: RunLoop?
    private let ready = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var stopped = false

    init() {
        let t = Thread { [self] in
            let loop = RunLoop.current
            let keep = Timer(timeInterval: 1000, repeats: true) { _ in } // a source: run() blocks
            loop.add(keep, forMode: .default)
            self.loop = loop
            ready.signal()
            while !isStopped { _ = loop.run(mode: .default, before: Date(timeIntervalSinceNow: 0.2)) }
            keep.invalidate()
            ready.signal()
        }
        t.start()
        ready.wait()
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    /// Run body on the thread; wait for it.
    func sync<T>(_ body: @escaping () throws -> T) throws -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        let body = Unchecked(body) // (run on the loop's thread while this one waits)
        loop!.add(Timer(fire: Date(), interval: 0, repeats: false) { _ in
            box.result = Result { try body.value() }
            done.signal()
        }, forMode: .default)
        done.wait()
        return try box.result!.get()
    }

    func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
        loop!.add(Timer(fire: Date(), interval: 0, repeats: false) { _ in }, forMode: .default)
        ready.wait()
    }
}

final class ResultBox<T>: @unchecked Sendable { var result: Result<T, Error>? }

/// What an observer was told, in order (indices only), safe to read from any thread.
final class ChangeLog: @unchecked Sendable {
    struct Entry: Equatable {
        var initial: Int? // the count, for .initial
        var deletions: [Int] = []
        var insertions: [Int] = []
        var modifications: [Int] = []
    }
    private let lock = NSLock()
    private var entries: [Entry] = []
    private let arrived = DispatchSemaphore(value: 0)

    func add<C: Collection>(_ change: RealmCollectionChange<C>) {
        var e = Entry()
        switch change {
        case .initial(let c): e.initial = c.count
        case .update(_, let d, let i, let m):
            e.deletions = d
            e.insertions = i
            e.modifications = m
        case .error(let error): Issue.record("observer got an error: \(error)")
        }
        lock.lock()
        entries.append(e)
        lock.unlock()
        arrived.signal()
    }

    var all: [Entry] {
        lock.lock()
        defer { lock.unlock() }
        return entries
    }

    /// Wait for the next entry (false after `seconds`).
    func wait(_ seconds: Double = 10) -> Bool { arrived.wait(timeout: .now() + seconds) == .success }
}

func inserted(_ i: [Int]) -> ChangeLog.Entry { ChangeLog.Entry(insertions: i) }

let chatTypes: [Object.Type] = [Message.self]

/// The chat's message list (by id) observed on `ui`, its initial delivery received.
func observeMessages(_ cfg: Realm.Configuration, on ui: LoopThread) throws -> (ChangeLog, NotificationToken) {
    let log = ChangeLog()
    let token = try ui.sync {
        try Realm(configuration: cfg).objects(Message.self).sorted(byKeyPath: "id").observe { log.add($0) }
    }
    #expect(log.wait())
    return (log, token)
}

@Suite("Notifications: collections, objects and Realms told what changed")
struct NotificationTests {
    // MARK: the seeds' chat example

    @Test func aMessageListSeesEachMessageAnotherThreadAdds() throws {
        let dir = TempDir()
        let cfg = config(dir, types: chatTypes)
        let ui = LoopThread()
        defer { ui.stop() }
        let (log, token) = try observeMessages(cfg, on: ui)
        var latencies: [Double] = []
        let writer = try Realm(configuration: cfg) // this thread writes, one message per commit
        for i in 1...20 {
            let t0 = Date()
            try writer.write { writer.add(Message(value: ["id": i, "text": "消息 \(i)"])) }
            #expect(log.wait(), "no notification for message \(i)")
            latencies.append(Date().timeIntervalSince(t0) * 1000)
        }
        token.invalidate()
        let entries = log.all
        #expect(entries.first == ChangeLog.Entry(initial: 0))
        #expect(Array(entries.dropFirst()) == (0..<20).map { inserted([$0]) })
        latencies.sort()
        print("chat, another thread: 20 messages, commit to callback median \(latencies[10]) ms")
    }

    @Test func anInMemoryRealmWakesItsObserversToo() throws {
        let cfg = Realm.Configuration(inMemoryIdentifier: "notify-\(UUID())", objectTypes: chatTypes)
        let keep = try Realm(configuration: cfg) // the store lives while a Realm of it does
        let ui = LoopThread()
        defer { ui.stop() }
        let log = ChangeLog()
        let token = try ui.sync {
            try Realm(configuration: cfg).objects(Message.self).observe { log.add($0) }
        }
        #expect(log.wait())
        try keep.write { keep.add(Message(value: ["id": 1, "text": "内存"])) }
        #expect(log.wait())
        #expect(log.all == [ChangeLog.Entry(initial: 0), inserted([0])])
        token.invalidate()
    }

    @Test func aMessageListSeesEachMessageAnotherProcessAdds() async throws {
        let dir = TempDir()
        let path = dir.file().path
        let cfg = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: chatTypes)
        _ = try threadRealm(cfg) // the schema, before the other process opens it
        let ui = LoopThread()
        defer { ui.stop() }
        let (log, token) = try observeMessages(cfg, on: ui)
        // another process adds 10 messages, one per commit, 50 ms apart
        await #expect(processExitsWith: .success) { [path = path as String] in
            let cfg = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Message.self])
            let realm = try! Realm(configuration: cfg)
            for i in 1...10 {
                usleep(50_000)
                try! realm.write { realm.add(Message(value: ["id": i, "text": "from afar \(i)"])) }
            }
        }
        while log.all.count < 11 && log.wait(10) {}
        token.invalidate()
        let entries = log.all
        #expect(entries.first == ChangeLog.Entry(initial: 0))
        #expect(Array(entries.dropFirst()) == (0..<10).map { inserted([$0]) })
    }

    // MARK: exact indices

    @Test func sortedResultsReportExactIndices() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        let dogs = ["a": 10, "c": 30, "e": 50].map { Dog(value: ["name": $0.key, "age": $0.value]) }
        try realm.write { realm.add(dogs) }
        let results = realm.objects(Dog.self).sorted(byKeyPath: "age")
        let log = ChangeLog()
        let token = results.observe { log.add($0) }
        realm.refresh() // the initial delivery is due when the thread refreshes (or its run loop turns)
        #expect(log.all == [ChangeLog.Entry(initial: 3)])
        // an insertion between: new index 1
        try realm.write { realm.add(Dog(value: ["name": "b", "age": 20])) }
        #expect(log.all.last == inserted([1]))
        // a modification that keeps the order: new index of c (2)
        let c = results[2]
        try realm.write { c.color = "黑色" }
        #expect(log.all.last == ChangeLog.Entry(modifications: [2]))
        // a move: a (old 0) becomes the oldest (new 3)
        let a = results[0]
        try realm.write { a.age = 99 }
        #expect(log.all.last == ChangeLog.Entry(deletions: [0], insertions: [3]))
        // deletions in the old order, insertions and modifications in the new
        // c goes (old index 1), z comes (new index 0), a is renamed (new index 3)
        try realm.write {
            realm.delete(results[1])
            realm.add(Dog(value: ["name": "z", "age": 1]))
            results.last!.name = "A"
        }
        #expect(log.all.last == ChangeLog.Entry(deletions: [1], insertions: [0], modifications: [3]))
        #expect(results.map(\.name) == ["z", "b", "e", "A"])
        // a commit that does not touch the results: nothing
        let before = log.all.count
        try realm.write { realm.add(Company(value: ["name": "Acme"])) }
        #expect(log.all.count == before)
        token.invalidate()
    }

    /// One object changed a commit (results followed in place: the keys between its old and new
    /// places move): at either end, staying, crossing the whole results, leaving, arriving.
    @Test func oneObjectMovesAtTheEdgesOfResults() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        try realm.write { for i in 0..<8 { realm.add(Dog(value: ["name": "d\(i)", "age": 10 + i])) } }
        let variants = [realm.objects(Dog.self), realm.objects(Dog.self).filter("age >= 10"),
                        realm.objects(Dog.self).sorted(byKeyPath: "age"),
                        realm.objects(Dog.self).sorted(byKeyPath: "age", ascending: false)]
        let logs = variants.map { _ in ChangeLog() }
        let tokens = zip(variants, logs).map { v, log in v.observe { log.add($0) } }
        realm.refresh()
        func keys(_ r: Results<Dog>) -> [Int64] { r.map { $0.__accessor!.key } }
        var olds = variants.map(keys)
        let all = realm.objects(Dog.self).sorted(byKeyPath: "age")
        let steps: [(String, () -> Void)] = [
            ("the first stays", { all[0].color = "白色" }),
            ("the last stays", { all[all.count - 1].color = "黑色" }),
            ("the first goes last", { all[0].age = 100 }),
            ("the last goes first", { all[all.count - 1].age = 1 }),
            ("a middle one goes first", { all[4].age = 0 }),
            ("a middle one goes last", { all[3].age = 200 }),
            ("the first leaves a filter", { all[0].age = 5 }),
            ("the first is deleted", { realm.delete(all[0]) }),
            ("the last is deleted", { realm.delete(all[all.count - 1]) }),
            ("one arrives first", { realm.add(Dog(value: ["name": "new", "age": -1])) }),
            ("one arrives last", { realm.add(Dog(value: ["name": "old", "age": 999])) }),
        ]
        for (what, step) in steps {
            let seen = logs.map { $0.all.count }
            try realm.write { step() }
            for (n, v) in variants.enumerated() {
                let now = keys(v)
                let entries = logs[n].all
                if entries.count == seen[n] {
                    #expect(now == olds[n], "\(what), variant \(n): changed without a notification")
                    continue
                }
                let e = entries.last!
                var told = olds[n]
                for d in e.deletions.reversed() { told.remove(at: d) }
                for i in e.insertions { told.insert(now[i], at: i) }
                #expect(told == now, "\(what), variant \(n): \(e)")
                olds[n] = now
            }
        }
        tokens.forEach { $0.invalidate() }
    }

    @Test func filteredResultsTellWhatEntersAndLeaves() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        try realm.write { for i in 0..<10 { realm.add(Dog(value: ["name": "d\(i)", "age": i])) } }
        let old = realm.objects(Dog.self).filter("age >= 5").sorted(byKeyPath: "age", ascending: false)
        let log = ChangeLog()
        let token = old.observe { log.add($0) }
        realm.refresh()
        #expect(log.all == [ChangeLog.Entry(initial: 5)]) // 9 8 7 6 5
        let dogs = realm.objects(Dog.self).sorted(byKeyPath: "age")
        try realm.write {
            dogs[4].age = 20 // d4 enters at the top
            dogs[9].age = 1  // d9 leaves (old index 0)
        }
        #expect(log.all.last == ChangeLog.Entry(deletions: [0], insertions: [0]))
        #expect(old.map(\.name) == ["d4", "d8", "d7", "d6", "d5"])
        token.invalidate()
    }

    // MARK: the randomized check

    /// Random writes to dogs; after each, the old snapshot with the deletions taken out and the
    /// insertions put in is the new snapshot, and the modifications are exactly the objects kept
    /// whose values changed.
    @Test func randomChangeSetsMatchAFullDiff() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        var rng = SystemRandomNumberGenerator()
        var seed = UInt64.random(in: 1...UInt64.max, using: &rng)
        func next(_ n: Int) -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int((seed >> 33) % UInt64(n))
        }
        let colors = ["黑色", "白色", "Zoë", "", nil]
        try realm.write {
            for _ in 0..<200 {
                realm.add(Dog(value: ["name": "dog\(next(50))", "age": next(20), "color": colors[next(5)] as Any]))
            }
        }
        let variants: [Results<Dog>] = [
            realm.objects(Dog.self),
            realm.objects(Dog.self).filter("age > 5"),
            realm.objects(Dog.self).sorted(byKeyPath: "name"),
            realm.objects(Dog.self).filter("color != nil").sorted(by: [SortDescriptor(keyPath: "age", ascending: false),
                                                                       SortDescriptor(keyPath: "name")]),
        ]
        struct Snap: Equatable { var name: String; var age: Int; var color: String? }
        func snapshot(_ r: Results<Dog>) -> [(key: Int64, value: Snap)] {
            r.map { ($0.__accessor!.key, Snap(name: $0.name, age: $0.age, color: $0.color)) }
        }
        var logs: [ChangeLog] = []
        var tokens: [NotificationToken] = []
        var snaps = variants.map(snapshot)
        for v in variants {
            let log = ChangeLog()
            logs.append(log)
            tokens.append(v.observe { log.add($0) })
        }
        realm.refresh()
        var checked = 0
        for round in 0..<60 {
            let seen = logs.map { $0.all.count }
            try realm.write {
                let all = realm.objects(Dog.self)
                for _ in 0..<(1 + next(round % 10 == 0 ? 40 : 5)) {
                    let r = next(10)
                    if r < 3 || all.isEmpty {
                        realm.add(Dog(value: ["name": "dog\(next(50))", "age": next(20), "color": colors[next(5)] as Any]))
                    } else if r < 5 {
                        realm.delete(all[next(all.count)])
                    } else {
                        let d = all[next(all.count)]
                        switch next(3) {
                        case 0: d.name = "dog\(next(50))"
                        case 1: d.age = next(20)
                        default: d.color = colors[next(5)]
                        }
                    }
                }
            }
            for (n, v) in variants.enumerated() {
                let now = snapshot(v)
                let old = snaps[n]
                snaps[n] = now
                let entries = logs[n].all
                guard entries.count > seen[n] else {
                    #expect(old.map(\.key) == now.map(\.key) && old.map(\.value) == now.map(\.value),
                            "variant \(n), round \(round): changed without a notification")
                    continue
                }
                #expect(entries.count == seen[n] + 1)
                let e = entries.last!
                var keys = old.map(\.key)
                for d in e.deletions.reversed() { keys.remove(at: d) }
                for i in e.insertions { keys.insert(now[i].key, at: i) }
                #expect(keys == now.map(\.key), "variant \(n), round \(round): \(e)")
                // modified: in both, not moved, values differ
                let oldValues = Dictionary(old.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
                let inserted = Set(e.insertions)
                let expectMods = now.indices.filter { i in
                    !inserted.contains(i) && oldValues[now[i].key].map { $0 != now[i].value } == true
                }
                #expect(e.modifications == expectMods, "variant \(n), round \(round)")
                checked += 1
            }
        }
        #expect(checked > 100)
        tokens.forEach { $0.invalidate() }
    }

    // MARK: tokens

    @Test func invalidatedTokensGetNothingMoreAndWritesCanSkipOne() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        let (a, b) = (ChangeLog(), ChangeLog())
        let ta = realm.objects(Dog.self).observe { a.add($0) }
        let tb = realm.objects(Dog.self).observe { b.add($0) }
        realm.refresh()
        try realm.write(withoutNotifying: [ta]) { realm.add(Dog(value: ["name": "x"])) }
        #expect(a.all == [ChangeLog.Entry(initial: 0)])
        #expect(b.all == [ChangeLog.Entry(initial: 0), inserted([0])])
        try realm.write { realm.add(Dog(value: ["name": "y"])) }
        #expect(a.all.last == inserted([1])) // what it skipped is not told later
        tb.invalidate()
        try realm.write { realm.add(Dog(value: ["name": "z"])) }
        #expect(b.all.count == 3) // initial, x, y: not z
        #expect(a.all.count == 3) // initial, y, z
        // invalidating inside a block stops it at once, and a released token stops too
        var calls = 0
        var tc: NotificationToken?
        tc = realm.objects(Dog.self).observe { _ in calls += 1; tc?.invalidate() }
        realm.refresh()
        try realm.write { realm.add(Dog(value: ["name": "w"])) }
        #expect(calls == 1)
        do {
            let log = ChangeLog()
            _ = realm.objects(Dog.self).observe { log.add($0) } // not kept
            realm.refresh()
            try realm.write { realm.add(Dog(value: ["name": "v"])) }
            #expect(log.all.isEmpty)
        }
        ta.invalidate()
    }

    // MARK: objects, lists, linking objects, Realms

    @Test func objectNotificationsGiveOldAndNewValuesThenDeletion() throws {
        let dir = TempDir()
        let cfg = config(dir)
        let realm = try Realm(configuration: cfg)
        let p = Person(value: ["name": "张三", "age": 30])
        try realm.write { realm.add(p) }
        var changes: [ObjectChange<Person>] = []
        let token = p.observe { changes.append($0) }
        try realm.write { p.name = "张三丰"; p.age = 31 }
        try realm.write { p.dogs.append(Dog(value: ["name": "小白"])) }
        let named = p.observe(keyPaths: ["age"]) { _ in Issue.record("the age did not change") }
        try realm.write { p.name = "李四" }
        named.invalidate()
        // a change committed by another thread: its old values are given
        let id = p.id
        let other = Thread {
            let r = try! Realm(configuration: cfg)
            try! r.write { r.object(ofType: Person.self, forPrimaryKey: id)!.age = 40 }
        }
        other.start()
        while !other.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        realm.refresh()
        try realm.write { realm.delete(p) }
        #expect(changes.count == 5)
        guard changes.count == 5 else { return }
        if case .change(let o, let props) = changes[0] {
            #expect(o === p)
            #expect(props.map(\.name) == ["name", "age"])
            // changed by this thread: no old values, as in RealmSwift
            #expect(props[0].oldValue == nil && props[0].newValue as? String == "张三丰")
            #expect(props[1].oldValue == nil && props[1].newValue as? Int == 31)
        } else { Issue.record("not a change: \(changes[0])") }
        if case .change(_, let props) = changes[1] {
            #expect(props.map(\.name) == ["dogs"] && props[0].oldValue == nil)
        } else { Issue.record("not a change: \(changes[1])") }
        if case .change(_, let props) = changes[3] {
            #expect(props.map(\.name) == ["age"] && props[0].oldValue as? Int == 31 && props[0].newValue as? Int == 40)
        } else { Issue.record("not a change: \(changes[3])") }
        if case .deleted = changes[4] {} else { Issue.record("not deleted: \(changes[4])") }
        #expect(token.state.isInvalidated)
    }

    /// 张三 with one dog, 小白, added to a Realm of `dir`.
    private func ownerAndDog(_ dir: TempDir) throws -> (Realm, Person, Dog) {
        let realm = try Realm(configuration: config(dir))
        let p = Person(value: ["name": "张三"])
        let dog = Dog(value: ["name": "小白", "age": 1])
        p.dogs.append(dog)
        try realm.write { realm.add(p) }
        return (realm, p, dog)
    }

    @Test func anObjectObservedThroughALinkKeyPathHearsOfItsLinkedObjects() throws {
        let dir = TempDir()
        let (realm, p, dog) = try ownerAndDog(dir)
        var seen: [[String]] = []
        let token = p.observe(keyPaths: ["dogs.name"]) { (change: ObjectChange<Person>) in
            if case .change(_, let props) = change { seen.append(props.map(\.name)) }
        }
        try realm.write { dog.name = "大白" }                   // counts: dogs.name
        try realm.write { dog.age = 2 }                        // does not
        try realm.write { p.dogs.append(Dog(value: ["name": "x"])) } // the list itself
        #expect(seen == [["dogs"], ["dogs"]])
        token.invalidate()
    }

    @Test func anObjectObservedThroughItsLinkingObjectsHearsOfThem() throws {
        let dir = TempDir()
        let (realm, p, dog) = try ownerAndDog(dir)
        var seen: [[String]] = []
        let token = dog.observe(keyPaths: ["owners.name"]) { (change: ObjectChange<Dog>) in
            if case .change(_, let props) = change { seen.append(props.map(\.name)) }
        }
        try realm.write { p.name = "李四" }   // counts: owners.name
        try realm.write { p.age = 40 }        // does not
        try realm.write { realm.add(Person(value: ["name": "new", "dogs": [dog]])) } // a new owner counts
        try realm.write { p.dogs.removeAll() }                                      // so does one fewer
        try realm.write { realm.add(Person(value: ["name": "dogless"])) }            // not: no link here
        #expect(seen == [["owners"], ["owners"], ["owners"]])
        token.invalidate()
    }

    @Test func aCollectionObservedThroughLinkingObjectsHearsOfThem() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        let p = Person(value: ["name": "张三"])
        p.dogs.append(Dog(value: ["name": "小白", "age": 1]))
        try realm.write { realm.add(p); realm.add(Dog(value: ["name": "alone"])) }
        let log = ChangeLog()
        let token = realm.objects(Dog.self).observe(keyPaths: ["owners.name"]) { log.add($0) }
        realm.refresh()
        try realm.write { p.name = "李四" }   // counts: the owners' names
        try realm.write { p.age = 40 }        // does not
        #expect(log.all == [ChangeLog.Entry(initial: 2), ChangeLog.Entry(modifications: [0])])
        token.invalidate()
    }

    @Test func listsTellElementsInsertedMovedRemovedAndModified() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir, types: zooTypes + [Book.self]))
        let p = Person(value: ["name": "张三"])
        try realm.write {
            realm.add(p)
            for n in ["小白", "小黑", "大黄"] { p.dogs.append(Dog(value: ["name": n])) }
        }
        let log = ChangeLog()
        let token = p.dogs.observe { log.add($0) }
        realm.refresh()
        #expect(log.all == [ChangeLog.Entry(initial: 3)])
        try realm.write { p.dogs.append(Dog(value: ["name": "小花"])) }
        #expect(log.all.last == inserted([3]))
        try realm.write { p.dogs.move(from: 0, to: 2) } // 小黑 大黄 小白 小花
        #expect(log.all.last == ChangeLog.Entry(deletions: [0], insertions: [2]))
        try realm.write { p.dogs[1].color = "黄色" }       // a dog of the list changed
        #expect(log.all.last == ChangeLog.Entry(modifications: [1]))
        try realm.write { p.dogs.remove(at: 3) }
        #expect(log.all.last == ChangeLog.Entry(deletions: [3]))
        try realm.write { realm.delete(p.dogs[0]) }         // deleting a dog takes it out
        #expect(log.all.last == ChangeLog.Entry(deletions: [0]))
        let count = log.all.count
        try realm.write { p.age = 5 }                       // not the list: nothing
        #expect(log.all.count == count)
        try realm.write { realm.delete(p) }                 // its object deleted: all deleted
        #expect(log.all.last == ChangeLog.Entry(deletions: [0, 1]))
        token.invalidate()
        // a list of strings
        let book = Book(value: ["title": "Strata"])
        try realm.write { realm.add(book); book.tags.append(contentsOf: ["db", "swift"]) }
        let tags = ChangeLog()
        let tt = book.tags.observe { tags.add($0) }
        realm.refresh()
        try realm.write { book.tags.insert("c", at: 1) }
        #expect(tags.all == [ChangeLog.Entry(initial: 2), inserted([1])])
        tt.invalidate()
    }

    @Test func linkingObjectsAndRealmsAreObservedToo() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        let dog = Dog(value: ["name": "小白"])
        try realm.write { realm.add(dog) }
        let log = ChangeLog()
        let token = dog.owners.observe { log.add($0) }
        var realmChanges: [Realm.Notification] = []
        let rt = realm.observe { n, r in
            #expect(r == realm)
            realmChanges.append(n)
        }
        realm.refresh()
        #expect(log.all == [ChangeLog.Entry(initial: 0)])
        let p = Person(value: ["name": "张三"])
        try realm.write { realm.add(p); p.dogs.append(dog) }
        #expect(log.all.last == inserted([0]))
        try realm.write { p.name = "张三丰" }
        #expect(log.all.last == ChangeLog.Entry(modifications: [0]))
        try realm.write { p.dogs.removeAll() }
        #expect(log.all.last == ChangeLog.Entry(deletions: [0]))
        #expect(realmChanges == [.didChange, .didChange, .didChange])
        token.invalidate()
        rt.invalidate()
    }

    @Test func keyPathsLimitModificationsToThoseProperties() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: config(dir))
        let p = Person(value: ["name": "张三"])
        try realm.write { realm.add(p); p.dogs.append(Dog(value: ["name": "小白"])) }
        let byName = ChangeLog(), byDogColor = ChangeLog(), all = ChangeLog()
        let people = realm.objects(Person.self)
        let tokens = [people.observe(keyPaths: ["name"]) { byName.add($0) },
                      people.observe(keyPaths: ["dogs.color"]) { byDogColor.add($0) },
                      people.observe { all.add($0) }]
        realm.refresh()
        try realm.write { p.age = 40 }
        try realm.write { p.dogs[0].color = "白色" }
        try realm.write { p.name = "李四" }
        #expect(byName.all.map(\.modifications) == [[], [0]])
        #expect(byDogColor.all.map(\.modifications) == [[], [0]])
        #expect(all.all.map(\.modifications) == [[], [0], [0], [0]])
        tokens.forEach { $0.invalidate() }
    }

    // MARK: delivery on a queue, and through the run loop of another thread

    @Test func aQueueObserverGetsResultsOfItsOwnRealm() throws {
        let dir = TempDir()
        let cfg = config(dir)
        let realm = try Realm(configuration: cfg)
        let queue = DispatchQueue(label: "strata.test.observer")
        let log = ChangeLog()
        final class Names: @unchecked Sendable { var last: [String] = [] }
        let names = Names()
        let token = realm.objects(Dog.self).sorted(byKeyPath: "name").observe(on: queue) { change in
            dispatchPrecondition(condition: .onQueue(queue))
            if case .update(let dogs, _, _, _) = change { names.last = dogs.map(\.name) } // read on the queue
            log.add(change)
        }
        #expect(log.wait())
        try realm.write { realm.add(Dog(value: ["name": "b"])) }
        #expect(log.wait())
        try realm.write { realm.add(Dog(value: ["name": "a"])) }
        #expect(log.wait())
        #expect(log.all == [ChangeLog.Entry(initial: 0), inserted([0]), inserted([0])])
        #expect(names.last == ["a", "b"])
        token.invalidate()
    }

    @Test func theChangesAsAnAsyncSequence() async throws {
        let dir = TempDir()
        let cfg = config(dir, types: chatTypes)
        let ui = LoopThread()
        let stream = try ui.sync { try Realm(configuration: cfg).objects(Message.self).changeset }
        let writer = Thread {
            let realm = try! Realm(configuration: cfg)
            for i in 1...3 {
                Thread.sleep(forTimeInterval: 0.05)
                try! realm.write { realm.add(Message(value: ["id": i, "text": "m\(i)"])) }
            }
        }
        writer.start()
        var seen: [String] = []
        for await change in stream {
            switch change {
            case .initial: seen.append("initial")
            case .update(_, _, let ins, _): seen.append("insert \(ins)")
            case .error(let e): Issue.record("\(e)")
            }
            if seen.count == 4 { break }
        }
        #expect(seen.first == "initial")
        #expect(seen.count == 4)
        ui.stop()
    }

    @MainActor @Test func anAsyncSequenceOnTheMainActor() async throws {
        let dir = TempDir()
        let cfg = config(dir, types: chatTypes)
        let realm = try threadRealm(cfg)
        let messages = realm.objects(Message.self).sorted(byKeyPath: "id")
        let writer = Thread {
            let realm = try! Realm(configuration: cfg)
            for i in 1...3 {
                usleep(50_000)
                try! realm.write { realm.add(Message(value: ["id": i, "text": "m\(i)"])) }
            }
        }
        writer.start()
        var kinds: [String] = []
        var texts: [String] = []
        for await change in messages.changeset {
            // the collection is live: read here, on the main actor, it shows the latest version
            switch change {
            case .initial(let m): kinds.append("initial"); texts = m.map(\.text)
            case .update(let m, _, _, _): kinds.append("update"); texts = m.map(\.text)
            case .error(let e): Issue.record("\(e)")
            }
            if texts.count == 3 { break }
        }
        #expect(kinds.first == "initial")
        #expect(texts == ["m1", "m2", "m3"])
    }

    // MARK: misuse

    @Test func observingInsideAWriteOrAReadOnlyRealmTraps() async throws {
        let inWrite = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try! Realm(configuration: Realm.Configuration(inMemoryIdentifier: "obs-write", objectTypes: [Message.self]))
            try! realm.write { _ = realm.objects(Message.self).observe { _ in } }
        }
        let e1 = String(decoding: try #require(inWrite).standardErrorContent, as: UTF8.self)
        #expect(e1.contains("from within write transactions"))
        let readOnly = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-ro-\(getpid()).realm")
            _ = try! Realm(configuration: Realm.Configuration(fileURL: dir, objectTypes: [Message.self]))
            let realm = try! Realm(configuration: Realm.Configuration(fileURL: dir, readOnly: true, objectTypes: [Message.self]))
            _ = realm.objects(Message.self).observe { _ in }
        }
        let e2 = String(decoding: try #require(readOnly).standardErrorContent, as: UTF8.self)
        #expect(e2.contains("Read-only Realms") && e2.contains("Message"))
    }
}
