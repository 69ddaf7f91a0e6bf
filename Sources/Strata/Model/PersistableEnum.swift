import Foundation

/// An enum stored as its raw value (an integer type or `String`, or any other stored type),
/// as RealmSwift declares it:
///
/// ```swift
/// enum Mood: String, PersistableEnum { case happy, sad }
/// class Diary: Object {
///     @Persisted var mood = Mood.happy
///     @Persisted var moods: List<Mood>
/// }
/// realm.objects(Diary.self).where { $0.mood == .sad }
/// ```
///
/// Usable wherever its raw type is: properties (optional too), lists, typed and string
/// queries (compared by raw value), sorting. A non-optional property whose stored raw value no
/// case has (the enum lost a case, another program wrote it) traps naming the class, the
/// property and the value; an optional one reads nil, as in RealmSwift.
public protocol PersistableEnum: _PrimitivePersistable, _OptionalPersistable, RawRepresentable, CaseIterable,
                                 _RealmCollectionValueInsideOptional, _RealmSchemaDiscoverable, MinMaxType,
                                 Comparable where RawValue: Comparable {}

extension PersistableEnum {
    /// The first case (the value of a property declared without one).
    public init() { self = Self.allCases.first! }

    /// Ordered by raw value.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension PersistableEnum where RawValue: _PrimitivePersistable & _RealmCollectionValueInsideOptional {
    /// An enum is stored as its raw value.
    public typealias PersistedType = RawValue

    public static var _strataCoreType: _CoreTypeTag { RawValue._strataCoreType }
    public static func _strataDefault() -> Self { Self() }

    /// A raw value read from a collection or an untyped input: no case has it is a trap naming it.
    public init(_strata v: _Stored) {
        let raw = RawValue(_strata: v)
        guard let e = Self(rawValue: raw) else {
            strataTrap("No case of enum \(Self.self) has the raw value '\(raw)' that was stored")
        }
        self = e
    }
    public var _strata: _Stored { rawValue._strata }
    public static func _strataExactly(_ v: _Stored) -> Self? { Self(rawValue: RawValue(_strata: v)) }

    public static func _strataGet(_ at: _ManagedProperty) -> Self {
        let raw = RawValue._strataGet(at)
        guard let e = Self(rawValue: raw) else {
            let info = at.accessor.info
            strataTrap("\(info.name).\(info.properties[at.index].name): no case of enum \(Self.self) has the stored raw value '\(raw)'")
        }
        return e
    }

    public static func _strataFromStored(_ v: _Stored, _ at: _ManagedProperty) -> Self? {
        if case .null = v.value { return nil }
        return Self(rawValue: RawValue(_strata: v))
    }
}

/// RealmSwift's older protocol for `@objc enum X: Int, RealmEnum` (stored as its Int raw value in
/// `@objc dynamic` properties and `RealmProperty`). Without an Objective-C runtime such an enum
/// is an ordinary Swift enum, so in Strata it is a `PersistableEnum` with Int raw values: usable
/// in `@Persisted` properties, collections and queries.
public protocol RealmEnum: PersistableEnum, RealmOptionalType where RawValue == Int {}
