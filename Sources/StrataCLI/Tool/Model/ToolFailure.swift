// ToolFailure.swift — an error the tool reports as it is: one line on stderr, exit status 1.
@_spi(StrataCore) import Strata

struct ToolFailure: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// The core's message for a failed call, with the status name (STRATA_ERR_CORRUPT: …).
func describe(_ error: Error) -> String {
    if let e = error as? StrataError { return e.description }
    return String(describing: error)
}
