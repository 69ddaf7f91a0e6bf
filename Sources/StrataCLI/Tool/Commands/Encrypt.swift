// Encrypt.swift — `strata encrypt FILE --new-key-file K`, `strata decrypt FILE` and `strata rekey
// FILE --new-key-file K`: the file rewritten in place (a compaction: refused while another
// process has it open; a crash leaves the old file or the new one whole) with another key, or
// none. The current key comes as for every command (--key-file or $STRATA_KEY).
import ArgumentParser
import CCore
import Foundation
@_spi(StrataCore) import Strata

struct NewKey: ParsableArguments {
    @Option(name: .customLong("new-key-file"), help: "The new key: a file of 64 bytes or 128 hex digits.")
    var newKeyFile: String
}

struct Encrypt: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Encrypt a plain file in place with the key in --new-key-file.")
    @OptionGroup var file: FileArgument
    @OptionGroup var newKey: NewKey
    @OptionGroup var output: JSONFlag

    func run() throws {
        try rewrite(file, key: try readKey(file: newKey.newKeyFile), verb: "encrypted", json: output.json)
    }
}

struct Decrypt: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decrypt an encrypted file in place (its key from --key-file or $STRATA_KEY).")
    @OptionGroup var file: FileArgument
    @OptionGroup var output: JSONFlag

    func run() throws { try rewrite(file, key: nil, verb: "decrypted", json: output.json) }
}

struct Rekey: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Encrypt a file in place with the key in --new-key-file instead of its current one.")
    @OptionGroup var file: FileArgument
    @OptionGroup var newKey: NewKey
    @OptionGroup var output: JSONFlag

    func run() throws {
        try rewrite(file, key: try readKey(file: newKey.newKeyFile), verb: "re-keyed", json: output.json)
    }
}

/// The file compacted in place into a copy with `key` (nil: plain), not packed when encrypted.
private func rewrite(_ file: FileArgument, key: [UInt8]?, verb: String, json: Bool) throws {
    let db = try file.open(readOnly: false)
    var opts = strata_copy_options()
    strata_copy_options_init_sized(&opts, MemoryLayout<strata_copy_options>.size)
    opts.set_encryption = true
    let progress = Progress("rewriting", total: 0)
    do {
        if let key {
            try key.withUnsafeBytes { raw in
                opts.encryption_key = raw.baseAddress
                opts.encryption_key_len = raw.count
                try StrataError.check { strata_db_compact(db.handle, &opts, $0) }
            }
        } else {
            try StrataError.check { strata_db_compact(db.handle, &opts, $0) }
        }
    } catch {
        progress.done(false)
        throw ToolFailure(describe(error))
    }
    progress.done()
    if json {
        print(JSON.object([("file", .string(file.file)), ("encrypted", .bool(key != nil))]).text)
    } else {
        print("\(file.file): \(verb)")
    }
}
