import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

/// An actor that keeps its own Realm, as RealmSwift's actor-isolated Realms are used.
actor DogStore {
    let configuration: Realm.Configuration
    init(_ configuration: Realm.Configuration) { self.configuration = configuration }

    func add(_ names: [String]) async throws -> Int {
        let realm = try await Realm.open(configuration: configuration)
        try await realm.asyncWrite {
            for n in names { realm.create(Dog.self, value: ["name": n]) }
        }
        return realm.objects(Dog.self).count
    }

    func count() async throws -> Int {
        try await Realm.open(configuration: configuration).objects(Dog.self).count
    }

    /// Observe the dogs from this actor until `expected` are seen; the counts delivered.
    func watch(until expected: Int) async throws -> [Int] {
        let realm = try await Realm.open(configuration: configuration)
        var seen: [Int] = []
        let token = realm.objects(Dog.self).observe { change in
            switch change {
            case .initial(let r), .update(let r, _, _, _): seen.append(r.count)
            case .error: break
            }
        }
        defer { token.invalidate() }
        let deadline = Date().addingTimeInterval(10)
        while seen.last != expected && Date() < deadline {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        return seen
    }
}

/// Another actor, for misuse.
actor Intruder {
    func touch(_ realm: Unchecked<Realm>) -> Int { realm.value.objects(Dog.self).count }
}

/// A counter per actor, bumped by many tasks (the stress test).
final class Tally: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var count = 0
}

/// An actor whose tasks bump its tally, read frozen snapshots and observe.
actor Counter {
    let id: Int
    let configuration: Realm.Configuration
    init(_ id: Int, _ configuration: Realm.Configuration) {
        self.id = id
        self.configuration = configuration
    }

    /// Bump the tally `times` times (or, given `until`, until then), each an asyncWrite; between
    /// them, a frozen snapshot of all tallies is read (its total never goes down) and an observer
    /// of this actor counts changes. `seenTotals.count` is how many bumps were made.
    func bump(_ times: Int, until deadline: Date? = nil) async throws -> (seenTotals: [Int], notified: Int) {
        let realm = try await Realm.open(configuration: configuration)
        var notified = 0
        let token = realm.objects(Tally.self).observe { change in
            if case .update = change { notified += 1 }
        }
        defer { token.invalidate() }
        var totals: [Int] = []
        while deadline.map({ Date() < $0 }) ?? (totals.count < times) {
            try await realm.asyncWrite {
                let t = realm.object(ofType: Tally.self, forPrimaryKey: id) ?? realm.create(Tally.self, value: ["id": id])
                t.count += 1
            }
            let frozen = realm.objects(Tally.self).freeze()
            totals.append(frozen.sum(ofProperty: "count"))
            await Task.yield()
        }
        return (totals, notified)
    }
}

@Suite("Swift concurrency: actor-isolated Realms, Realm.open, asyncWrite, async write queues")
struct ConcurrencyTests {
    @Test func anActorOpensWritesAndReadsItsRealm() async throws {
        let dir = TempDir()
        let store = DogStore(config(dir))
        #expect(try await store.add(["Rex", "Zoë"]) == 2)
        #expect(try await store.add(["小黑"]) == 3)
        #expect(try await store.count() == 3)
        // the same file from a thread sees the actor's commits
        let realm = try threadRealm(config(dir))
        #expect(realm.objects(Dog.self).count == 3)
    }

    @Test func realmOpenMigratesOffTheCallingActor() async throws {
        let dir = TempDir()
        do {
            let realm = try threadRealm(config(dir, types: [Dog.self, Person.self, Company.self]))
            try realm.write { realm.create(Dog.self, value: ["name": "a"]) }
        }
        let migratedOn = Locked<Bool?>(nil)
        var cfg = config(dir, types: [Dog.self, Person.self, Company.self], version: 1)
        cfg.migrationBlock = { _, _ in migratedOn.set(Thread.isMainThread) }
        let count = try await Task { @MainActor () async throws -> Int in
            let realm = try await Realm(configuration: cfg)
            return realm.objects(Dog.self).count
        }.value
        #expect(count == 1 && migratedOn.get() == false)
    }

    @Test func asyncWriteWaitsForAnotherWriterWithoutTakingTheLockEarly() async throws {
        let dir = TempDir()
        let store = DogStore(config(dir))
        _ = try await store.count() // the file exists
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let writer = Thread {
            let realm = try! Realm(configuration: config(dir))
            realm.beginWrite()
            realm.create(Dog.self, value: ["name": "first"])
            holding.signal()
            release.wait()
            try! realm.commitWrite()
        }
        writer.start()
        holding.wait()
        let pending = Task { try await store.add(["second"]) }
        try await Task.sleep(nanoseconds: 50_000_000)
        release.signal()
        // the actor's write went after the thread's and saw it (it moved to the latest version)
        #expect(try await pending.value == 2)
    }

    @Test func aCancelledWaitWritesNothing() async throws {
        let dir = TempDir()
        let store = DogStore(config(dir))
        _ = try await store.count()
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread {
            let realm = try! Realm(configuration: config(dir))
            realm.beginWrite()
            holding.signal()
            release.wait()
            realm.cancelWrite()
        }.start()
        holding.wait()
        let pending = Task { try await store.add(["never"]) }
        try await Task.sleep(nanoseconds: 30_000_000)
        pending.cancel()
        await #expect(throws: CancellationError.self) { try await pending.value }
        release.signal()
        #expect(try await store.count() == 0)
        // the lock is free again: a write goes through
        #expect(try await store.add(["later"]) == 1)
    }

    @Test func notificationsReachTheActorsRealm() async throws {
        let dir = TempDir()
        let store = DogStore(config(dir))
        _ = try await store.count()
        let watching = Task { try await store.watch(until: 2) }
        try await Task.sleep(nanoseconds: 50_000_000)
        let realm = try threadRealm(config(dir))
        try realm.write { realm.create(Dog.self, value: ["name": "a"]) }
        try realm.write { realm.create(Dog.self, value: ["name": "b"]) }
        let seen = try await watching.value
        // the initial count (whatever had been committed when it was delivered), then each commit
        #expect(seen.last == 2 && seen == seen.sorted())
    }

    @MainActor
    @Test func observingOnAnActorDeliversIsolatedToIt() async throws {
        let dir = TempDir()
        let store = DogStore(config(dir))
        let realm = try await Realm(configuration: config(dir)) // the main actor's
        let rex = try realm.write { realm.create(Dog.self, value: ["name": "Rex", "age": 3]) }
        let dogs = realm.objects(Dog.self).sorted(byKeyPath: "name")
        let counts = Locked<[Int]>([])
        let ages = Locked<[Int]>([])
        // registered from the main actor; delivered on the store actor
        let t1 = await dogs.observe(on: store) { actor, change in
            actor.assertIsolated()
            if case .initial(let r) = change { counts.update { $0.append(r.count) } }
            if case .update(let r, _, let inserted, _) = change { counts.update { $0.append(r.count * 10 + inserted.count) } }
        }
        let t2 = await rex.observe(keyPaths: [\Dog.age], on: store) { actor, change in
            if case .change(let dog, _) = change { ages.update { $0.append(dog.age) } }
        }
        try onAnotherThread {
            let realm = try Realm(configuration: config(dir))
            try realm.write {
                realm.create(Dog.self, value: ["name": "Zoë"])
                realm.objects(Dog.self).filter("name == 'Rex'").first!.age = 4
            }
        }
        let deadline = Date().addingTimeInterval(10)
        while (counts.get().count < 2 || ages.get().isEmpty) && Date() < deadline {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        #expect(counts.get() == [1, 21] && ages.get() == [4])
        t1.invalidate()
        t2.invalidate()
    }

    @Test func writeAsyncOnAQueueRunsInOrderAndCompletesAfterCommit() throws {
        let dir = TempDir()
        let queue = DispatchQueue(label: "writes")
        let done = DispatchSemaphore(value: 0)
        let log = Locked<[String]>([])
        queue.async {
            let realm = try! Realm(configuration: config(dir), queue: queue)
            realm.writeAsync({
                realm.create(Dog.self, value: ["name": "one"])
                log.update { $0.append("block1") }
            }, onComplete: { error in
                log.update { $0.append("complete1 \(error == nil) \(realm.objects(Dog.self).count)") }
            })
            let cancelled = realm.beginAsyncWrite { log.update { $0.append("cancelled ran") } }
            try! realm.cancelAsyncWrite(cancelled)
            realm.beginAsyncWrite {
                realm.create(Dog.self, value: ["name": "two"])
                realm.commitAsyncWrite { _ in
                    log.update { $0.append("complete2 \(realm.objects(Dog.self).count)") }
                    #expect(!realm.isInWriteTransaction)
                    done.signal()
                }
            }
            realm.beginAsyncWrite {
                realm.create(Dog.self, value: ["name": "dropped"]) // no commit: cancelled
            }
            #expect(realm.isPerformingAsynchronousWriteOperations)
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        queue.sync {}
        #expect(log.get() == ["block1", "complete1 true 1", "complete2 2"])
        let realm = try Realm(configuration: config(dir))
        #expect(realm.objects(Dog.self).map(\.name).sorted() == ["one", "two"])
    }

    @Test func groupedCommitsShareLogSyncsAndCompleteOnlyAfterTheirSync() throws {
        let dir = TempDir()
        let realm = try threadRealm(config(dir)) // the schema, and the file kept open throughout
        let writers = 8, each = 25
        let done = DispatchSemaphore(value: 0)
        let completed = Locked(0)
        let early = Locked(0) // completions that ran before a sync had covered their commit
        var queues: [DispatchQueue] = []
        for w in 0..<writers {
            let queue = DispatchQueue(label: "grouped-\(w)")
            queues.append(queue)
            queue.async {
                let realm = try! Realm(configuration: config(dir), queue: queue)
                let shared = realm.instance.shared
                func next(_ i: Int) {
                    if i == each { done.signal(); return }
                    realm.beginAsyncWrite {
                        realm.create(Dog.self, value: ["name": "w\(w)-\(i)"])
                        realm.commitAsyncWrite(allowGrouping: true) { error in
                            #expect(error == nil)
                            var n = 0
                            completed.update { $0 += 1; n = $0 }
                            if shared.groupSync.stats.commits < n { early.update { $0 += 1 } }
                            next(i + 1)
                        }
                    }
                }
                next(0)
            }
        }
        for _ in 0..<writers { #expect(done.wait(timeout: .now() + 30) == .success) }
        for q in queues { q.sync {} }
        realm.refresh()
        #expect(realm.objects(Dog.self).count == writers * each && completed.get() == writers * each)
        let stats = realm.instance.shared.groupSync.stats
        #expect(stats.commits == writers * each && early.get() == 0)
        #expect(stats.syncs < stats.commits) // commits that arrived together shared a sync
    }

    /// STRATA_STRESS_SECONDS=60 runs it for a minute (issue 39's figure); `make test` runs 10
    /// bumps per task.
    @Test(.timeLimit(.minutes(3)))
    func manyTasksOnAFewActorsWriteReadAndObserve() async throws {
        // 64 tasks over 4 actors, each bumping its actor's tally through asyncWrite
        let dir = TempDir()
        let cfg = config(dir, types: [Tally.self])
        let counters = (0..<4).map { Counter($0, cfg) }
        let seconds = ProcessInfo.processInfo.environment["STRATA_STRESS_SECONDS"].flatMap(Double.init)
        let deadline = seconds.map { Date().addingTimeInterval($0) }
        let results = try await withThrowingTaskGroup(of: (actor: Int, seenTotals: [Int], notified: Int).self) { group in
            for task in 0..<64 {
                group.addTask {
                    let r = try await counters[task % 4].bump(10, until: deadline)
                    return (task % 4, r.seenTotals, r.notified)
                }
            }
            var all: [(actor: Int, seenTotals: [Int], notified: Int)] = []
            for try await r in group { all.append(r) }
            return all
        }
        // the final state: each tally is the number of bumps its actor's tasks made
        let made = (0..<4).map { a in results.filter { $0.actor == a }.reduce(0) { $0 + $1.seenTotals.count } }
        let realm = try threadRealm(cfg)
        #expect(realm.objects(Tally.self).count == 4)
        #expect(Array(realm.objects(Tally.self).sorted(byKeyPath: "id").map(\.count)) == made)
        if seconds == nil { #expect(made == [160, 160, 160, 160]) }
        let total = made.reduce(0, +)
        for r in results {
            #expect(r.seenTotals == r.seenTotals.sorted()) // snapshots never go back in time
            #expect(r.seenTotals.allSatisfy { $0 >= 1 && $0 <= total })
        }
        if let seconds { print("stress: \(seconds) s, 64 tasks on 4 actors: \(total) async commits, tallies \(made)") }
    }

    @Test func completedAsyncWritesSurviveTheProcessBeingKilled() async throws {
        // a child makes async writes, recording each completion in a side file, and is killed
        // (SIGKILL) after a random number of them: every recorded one is in the database
        let dir = TempDir()
        let side = dir.file("completed.txt").path
        let path = dir.file().path
        _ = try threadRealm(config(dir))
        let seed = UInt64.random(in: 5...40)
        await #expect(processExitsWith: .signal(SIGKILL)) { [side = side as String, path = path as String, seed = seed as UInt64] in
            let store = DogStore(Realm.Configuration(fileURL: URL(fileURLWithPath: path),
                                                     objectTypes: [Company.self, Person.self, Dog.self]))
            _ = FileManager.default.createFile(atPath: side, contents: nil)
            let log = FileHandle(forWritingAtPath: side)!
            for i in 0..<UInt64.max {
                _ = try await store.add(["dog \(i)"])
                log.write(Data("\(i)\n".utf8))
                try log.synchronize()
                if i == seed { kill(getpid(), SIGKILL) }
            }
        }
        let recorded = (try String(contentsOfFile: side, encoding: .utf8)).split(separator: "\n").map(String.init)
        let realm = try threadRealm(config(dir))
        let names = Set(realm.objects(Dog.self).map(\.name))
        #expect(recorded.count >= 5 && recorded.allSatisfy { names.contains("dog \($0)") })
    }

    @MainActor
    @Test func observingFromACancelledTaskRegistersNothing() async throws {
        let dir = TempDir()
        let realm = try await Realm(configuration: config(dir))
        let dogs = realm.objects(Dog.self)
        let called = Locked(false)
        let token = await Task { @MainActor () -> NotificationToken in
            withUnsafeCurrentTask { $0?.cancel() }
            return await dogs.observe(on: MainActor.shared) { _, _ in called.set(true) }
        }.value
        #expect(!token.invalidate()) // never active
        let live = await dogs.observe(on: DogStore(config(dir))) { _, _ in }
        #expect(live.invalidate() && !live.invalidate())
        #expect(!called.get())
    }

    @Test func usingAnActorsRealmFromAnotherActorTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            let store = DogStore(config(dir))
            let realm = try await Realm(configuration: config(dir), actor: store)
            _ = await Intruder().touch(Unchecked(realm))
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        // (the runtime's check, naming the actor: "Incorrect actor executor assumption; expected
        // 'StrataTests.DogStore' executor")
        #expect(text.contains("actor executor") && text.contains("DogStore"))
    }

    @Test func anActorsRealmUsedFromAThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TempDir()
            let realm = Unchecked(try await Realm(configuration: config(dir), actor: DogStore(config(dir))))
            let other = Thread { realm.value.beginWrite() } // (misuse on purpose)
            other.start()
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("actor executor") && text.contains("DogStore"))
    }
}

/// The calling thread's Realm (in an async function `Realm(configuration:)` is the main actor's
/// async initializer, as in RealmSwift).
func threadRealm(_ configuration: Realm.Configuration) throws -> Realm {
    try Realm(configuration: configuration)
}

