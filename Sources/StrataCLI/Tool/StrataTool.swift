// StrataTool.swift — the `strata` command: look into, query, export, check and repair a
// database file. Each subcommand is a file of Commands/; they reach files through the package's
// core wrappers (CoreTxn, CoreTable) and the C ABI, so any file opens, whatever its schema.
import ArgumentParser
import CCore
@_spi(StrataCore) import Strata

@main
struct StrataTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Look into, query, export, check and repair Strata database files.",
        discussion: """
            Every command takes the database file first and prints a human table on a terminal; \
            --json gives the same as JSON for scripts. Errors go to stderr with the core's \
            message and a non-zero exit status; a command that fails changes nothing.
            """,
        version: "strata \(String(cString: strata_version())) (file format \(strata_format_version()))",
        subcommands: [
            Info.self, Schema.self, Query.self, Export.self, Import.self, Dump.self, Load.self,
            Check.self, Compact.self, Copy.self, Readers.self, Watch.self, Recover.self,
            Encrypt.self, Decrypt.self, Rekey.self,
        ]
    )

    /// As ParsableCommand's, with the core's errors shown with their status name
    /// ("Error: STRATA_ERR_CORRUPT: page 7 ...").
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let e as StrataError {
            exit(withError: ToolFailure(e.description))
        } catch {
            exit(withError: error)
        }
    }
}
