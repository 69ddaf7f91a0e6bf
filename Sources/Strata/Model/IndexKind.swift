/// The kind of index a property keeps: `@Persisted(indexed: .fullText) var body: String`.
///
/// `.general` is the index `indexed: true` gives (equality, ranges and sorting use it).
/// `.fullText` indexes the words of a `String` property — folded, so case and diacritics never
/// matter; Chinese and Japanese characters each a word — for `TEXT` queries
/// (`"body TEXT 'swift -objc data*'"`) and ``Query/fullTextMatches(_:)``. RealmSwift has no
/// full-text search; Realm's Kotlin, Dart and JavaScript SDKs have it under this name.
public enum IndexKind: Sendable, Hashable {
    /// A general index: equality, range and sorted queries use it.
    case general
    /// A full-text index of the words of a string.
    case fullText
}
