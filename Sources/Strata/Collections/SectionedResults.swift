import Foundation

// RealmSwift's sectioned results: a sorted collection grouped into sections by a key computed
// from each element (a key path's value, or a block's). Sections come in the order of their
// first element in the sorted collection, and each holds its elements in that order; the
// grouping is computed in one pass over the sorted elements (Sectioning.swift) and kept until
// the Realm's version moves. Observers get section and row changes computed from the sorted
// collection's own change set, calling the key block only for the elements that were inserted
// or modified (the rest keep their keys), so a commit costs the core's diff plus a pass over
// integers, not a key per element.

/// What ``SectionedResults`` and ``ResultsSection`` share: random access, live (or frozen),
/// thread-confined, observable.
public protocol RealmSectionedResult: RandomAccessCollection, Equatable, ThreadConfined {
    /// The Realm the elements belong to.
    var realm: Realm? { get }
    /// Whether the collection can no longer be read (its Realm was invalidated).
    var isInvalidated: Bool { get }
    /// How many sections (or, for a section, elements) there are now.
    var count: Int { get }
    /// Whether the collection is frozen: one version, readable from any thread.
    var isFrozen: Bool { get }
    /// A frozen copy: the same sections at this version, readable from any thread. Traps inside a write.
    func freeze() -> Self
    /// The live collection of a frozen one, on the calling thread's Realm (nil when it cannot be read there).
    func thaw() -> Self?
    /// Calls `block` with the sections now and after each commit that changes them: rows deleted
    /// (old index paths), inserted and modified (new ones), sections inserted and deleted. On
    /// `queue` (serial) or the observing thread's run loop; `keyPaths` limit which properties'
    /// changes count as modifications. Keep the token: releasing it stops the notifications.
    func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                 _ block: @escaping (SectionedResultsChange<Self>) -> Void) -> NotificationToken
}

extension RealmSectionedResult {
    /// Calls `block` with the sections now and after each commit that changes them (all
    /// properties, on the observing thread unless a queue is given).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (SectionedResultsChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths, on: queue, block)
    }

    /// The same changes delivered isolated to `actor`; returns once the observer is in place.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, SectionedResultsChange<Self>) -> Void) async -> NotificationToken {
        let r = Observation.registering(on: actor) {
            observe(keyPaths: keyPaths, on: nil, Observation.delivering(on: actor, block))
        }
        await r.target?.wait()
        return r.token
    }
}

extension RealmSectionedResult where Element: RealmSectionedResult, Element.Element: Object {
    /// Observes with typed key paths of the elements' class.
    public func observe(keyPaths: [PartialKeyPath<Element.Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (SectionedResultsChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { KeyPathNames.name($0) }, on: queue, block)
    }

    /// Observes with typed key paths, delivered isolated to `actor`.
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Element.Element>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, SectionedResultsChange<Self>) -> Void) async -> NotificationToken {
        await observe(keyPaths: keyPaths.map { KeyPathNames.name($0) }, on: actor, block)
    }
}

extension RealmSectionedResult where Element: Object {
    /// Observes with typed key paths of the elements' class.
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (SectionedResultsChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { KeyPathNames.name($0) }, on: queue, block)
    }

    /// Observes with typed key paths, delivered isolated to `actor`.
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Element>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, SectionedResultsChange<Self>) -> Void) async -> NotificationToken {
        await observe(keyPaths: keyPaths.map { KeyPathNames.name($0) }, on: actor, block)
    }
}

/// A sorted collection grouped into sections by a key (`dogs.sectioned(by: \.firstLetter)`):
/// each element is a ``ResultsSection``. Live: it follows the Realm's version.
public struct SectionedResults<Key: _Persistable & Hashable, SectionElement: RealmCollectionValue>: RealmSectionedResult {
    /// A section of the results.
    public typealias Element = ResultsSection<Key, SectionElement>
    let grouping: SectionGrouping<Key, SectionElement>

    init(_ grouping: SectionGrouping<Key, SectionElement>) { self.grouping = grouping }

    /// The position of the first section (0).
    public var startIndex: Int { 0 }
    /// The position after the last section.
    public var endIndex: Int { count }
    /// How many sections there are now.
    public var count: Int { grouping.sections().keys.count }
    /// The sections' keys, in the sections' order.
    public var allKeys: [Key] { grouping.sections().keys }

    /// The section at `index`. Traps when out of range, naming the index and the count.
    public subscript(_ index: Int) -> Element {
        let s = grouping.sections()
        guard index >= 0 && index < s.keys.count else {
            strataTrap("Index \(index) is out of bounds (must be less than \(s.keys.count)).")
        }
        return ResultsSection(grouping, key: s.keys[index])
    }

    /// The element at `indexPath` (section, then item). Traps when out of range.
    public subscript(_ indexPath: IndexPath) -> SectionElement {
        self[indexPath.section][indexPath.item]
    }

    /// Iterates over the sections.
    public func makeIterator() -> SectionedResultsIterator<Key, SectionElement> {
        SectionedResultsIterator(self)
    }

    /// The Realm of the elements.
    public var realm: Realm? { grouping.results.realm }
    /// Whether the results can no longer be read.
    public var isInvalidated: Bool { grouping.results.isInvalidated }
    /// Whether the results are frozen.
    public var isFrozen: Bool { grouping.results.isFrozen }

    /// A frozen copy (the same sections at this version, readable from any thread).
    public func freeze() -> SectionedResults { SectionedResults(grouping.with(grouping.results.freeze())) }

    /// The live results of a frozen copy, on this thread's Realm.
    public func thaw() -> SectionedResults? { grouping.results.thaw().map { SectionedResults(grouping.with($0)) } }

    /// The same sectioned results read in `realm` (a thread-safe reference's resolution).
    public func _strataFound(in realm: Realm) -> SectionedResults? {
        grouping.results._strataFound(in: realm).map { SectionedResults(grouping.with($0)) }
    }

    /// Calls `block` with the sections now and after each commit that changes them.
    public func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                        _ block: @escaping (SectionedResultsChange<SectionedResults>) -> Void) -> NotificationToken {
        grouping.observe(keyPaths: keyPaths, on: queue) { grouping, change in
            guard let change else { return block(.initial(SectionedResults(grouping))) }
            if change.isEmpty { return }
            block(.update(SectionedResults(grouping), deletions: change.deletions, insertions: change.insertions,
                          modifications: change.modifications, sectionsToInsert: change.sectionsToInsert,
                          sectionsToDelete: change.sectionsToDelete))
        }
    }

    /// The same results (the same grouping of the same collection).
    public static func == (lhs: SectionedResults, rhs: SectionedResults) -> Bool { lhs.grouping === rhs.grouping }
}

/// One section of ``SectionedResults``: its key and its elements, in the sorted order. Live and
/// bound to its key: after a commit it holds the elements that have the key then (none when
/// the section went away).
public struct ResultsSection<Key: _Persistable & Hashable, T: RealmCollectionValue>: RealmSectionedResult, Identifiable {
    /// The elements are the results' elements.
    public typealias Element = T
    let grouping: SectionGrouping<Key, T>
    /// The section's key.
    public let key: Key

    init(_ grouping: SectionGrouping<Key, T>, key: Key) {
        self.grouping = grouping
        self.key = key
    }

    /// The section's identity: its key.
    public var id: Key { key }

    private var items: [Int] {
        let s = grouping.sections()
        guard let i = s.index[key] else { return [] }
        return s.rows(i)
    }

    /// The position of the first element (0).
    public var startIndex: Int { 0 }
    /// The position after the last element.
    public var endIndex: Int { count }
    /// How many elements the section holds now.
    public var count: Int { items.count }

    /// The element at `index`. Traps when out of range, naming the index and the count.
    public subscript(_ index: Int) -> T {
        let rows = items
        guard index >= 0 && index < rows.count else {
            strataTrap("Index \(index) is out of bounds (must be less than \(rows.count)).")
        }
        return grouping.results[rows[index]]
    }

    /// Iterates over the section's elements.
    public func makeIterator() -> SectionIterator<T> {
        let results = grouping.results
        return SectionIterator(items.lazy.map { results[$0] }.makeIterator())
    }

    /// The Realm of the elements.
    public var realm: Realm? { grouping.results.realm }
    /// Whether the section can no longer be read.
    public var isInvalidated: Bool { grouping.results.isInvalidated }
    /// Whether the section is frozen.
    public var isFrozen: Bool { grouping.results.isFrozen }

    /// A frozen copy of the section at this version.
    public func freeze() -> ResultsSection { ResultsSection(grouping.with(grouping.results.freeze()), key: key) }

    /// The live section of a frozen copy, on this thread's Realm.
    public func thaw() -> ResultsSection? { grouping.results.thaw().map { ResultsSection(grouping.with($0), key: key) } }

    /// The same section read in `realm` (a thread-safe reference's resolution).
    public func _strataFound(in realm: Realm) -> ResultsSection? {
        grouping.results._strataFound(in: realm).map { ResultsSection(grouping.with($0), key: key) }
    }

    /// Calls `block` with the section now and after each commit that changes it: its rows'
    /// changes (index paths as in the whole sectioned results), and whether it was deleted or
    /// inserted (its section index then).
    public func observe(keyPaths: [String]?, on queue: DispatchQueue?,
                        _ block: @escaping (SectionedResultsChange<ResultsSection>) -> Void) -> NotificationToken {
        let key = self.key
        return grouping.observe(keyPaths: keyPaths, on: queue) { grouping, change in
            let section = ResultsSection(grouping, key: key)
            guard let change else { return block(.initial(section)) }
            let mine = change.restricted(to: key)
            if mine.isEmpty { return }
            block(.update(section, deletions: mine.deletions, insertions: mine.insertions,
                          modifications: mine.modifications, sectionsToInsert: mine.sectionsToInsert,
                          sectionsToDelete: mine.sectionsToDelete))
        }
    }

    /// The same section (the same key of the same results).
    public static func == (lhs: ResultsSection, rhs: ResultsSection) -> Bool {
        lhs.grouping === rhs.grouping && lhs.key == rhs.key
    }
}

/// What a sectioned-results observer receives: the sections first, then after each commit that
/// changed them the rows deleted (index paths in the old sections), inserted and modified
/// (index paths in the new ones), and the sections inserted (new indices) and deleted (old
/// indices). The rows of a deleted section are not listed; those of an inserted one are.
@frozen public enum SectionedResultsChange<Collection> {
    /// The sections when observing began.
    case initial(Collection)
    /// The sections after a commit, with what changed.
    case update(Collection, deletions: [IndexPath], insertions: [IndexPath], modifications: [IndexPath],
                sectionsToInsert: IndexSet, sectionsToDelete: IndexSet)
}

/// RealmSwift's earlier name of ``SectionedResultsChange``.
@available(*, deprecated, renamed: "SectionedResultsChange")
public typealias RealmSectionedResultsChange = SectionedResultsChange

/// Iterates over the sections of ``SectionedResults``.
@frozen public struct SectionedResultsIterator<Key: _Persistable & Hashable, Element: RealmCollectionValue>: IteratorProtocol {
    private let results: SectionedResults<Key, Element>
    private var keys: IndexingIterator<[Key]>

    init(_ results: SectionedResults<Key, Element>) {
        self.results = results
        keys = results.allKeys.makeIterator()
    }

    /// The next section, or nil after the last.
    public mutating func next() -> ResultsSection<Key, Element>? {
        keys.next().map { ResultsSection(results.grouping, key: $0) }
    }
}

/// Iterates over the elements of a ``ResultsSection``.
@frozen public struct SectionIterator<Element: RealmCollectionValue>: IteratorProtocol {
    private var base: AnyIterator<Element>

    init<I: IteratorProtocol>(_ base: I) where I.Element == Element {
        var b = base
        self.base = AnyIterator { b.next() }
    }

    /// The next element, or nil after the last.
    public mutating func next() -> Element? { base.next() }
}

/// RealmSwift's earlier name of ``SectionedResultsIterator``.
@available(*, deprecated, renamed: "SectionedResultsIterator")
public typealias RLMSectionedResultsIterator = SectionedResultsIterator
/// RealmSwift's earlier name of ``SectionIterator``.
@available(*, deprecated, renamed: "SectionIterator")
public typealias RLMSectionIterator = SectionIterator

// MARK: - Sectioning a collection

extension RealmCollection {
    /// The collection sorted by `sortDescriptors` and grouped into sections by the key `keyBlock`
    /// gives each element (the first sort descriptor should decide the key). Traps without a
    /// sort descriptor.
    public func sectioned<Key: _Persistable & Hashable>(sortDescriptors: [SortDescriptor],
                                                        _ keyBlock: @escaping ((Element) -> Key)) -> SectionedResults<Key, Element> {
        guard !sortDescriptors.isEmpty else {
            strataTrap("There must be at least one SortDescriptor when using SectionedResults.")
        }
        guard let results = _strataResults else {
            strataTrap("This method may only be called on RLMArray instances retrieved from an RLMRealm")
        }
        return SectionedResults(SectionGrouping(results.sorted(by: sortDescriptors), keyBlock: keyBlock,
                                                keyPath: sortDescriptors[0].keyPath))
    }

    /// Sorted by `keyPath` and grouped by its value: one section per distinct value.
    public func sectioned<Key: _Persistable & Hashable>(by keyPath: KeyPath<Element, Key>,
                                                        ascending: Bool = true) -> SectionedResults<Key, Element> where Element: Object {
        sectioned(sortDescriptors: [SortDescriptor(keyPath: KeyPathNames.name(keyPath), ascending: ascending)]) {
            $0[keyPath: keyPath]
        }
    }

    /// Sorted by `sortDescriptors` (the first must be `keyPath`) and grouped by `keyPath`'s value.
    /// Traps when the sort descriptors are empty or start with another key path.
    public func sectioned<Key: _Persistable & Hashable>(by keyPath: KeyPath<Element, Key>,
                                                        sortDescriptors: [SortDescriptor]) -> SectionedResults<Key, Element> where Element: Object {
        guard let first = sortDescriptors.first else {
            strataTrap("Can not section Results with empty sortDescriptor parameter.")
        }
        guard first.keyPath == KeyPathNames.name(keyPath) else {
            strataTrap("The section key path must match the primary sort descriptor.")
        }
        return sectioned(sortDescriptors: sortDescriptors) { $0[keyPath: keyPath] }
    }

    /// Sorted by `sortDescriptors` and grouped by the key `block` gives each element.
    public func sectioned<Key: _Persistable & Hashable>(by block: @escaping ((Element) -> Key),
                                                        sortDescriptors: [SortDescriptor]) -> SectionedResults<Key, Element> where Element: Object {
        sectioned(sortDescriptors: sortDescriptors, block)
    }

    /// A collection of values sorted by themselves and grouped by the key `block` gives each.
    public func sectioned<Key: _Persistable & Hashable>(by block: @escaping ((Element) -> Key),
                                                        ascending: Bool = true) -> SectionedResults<Key, Element> {
        sectioned(sortDescriptors: [SortDescriptor(keyPath: "self", ascending: ascending)], block)
    }
}

#if !canImport(UIKit) && !canImport(AppKit)
extension IndexPath {
    /// A path of a section and an item in it (UIKit's and AppKit's spelling, which Linux lacks).
    public init(item: Int, section: Int) { self.init(indexes: [section, item]) }
    /// The section (the path's first index).
    public var section: Int { self[0] }
    /// The item in the section (the path's second index).
    public var item: Int { self[1] }
}
#endif
