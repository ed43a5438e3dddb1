import Foundation

/// Dispatches `liveactivity <subcommand> [options]`.
///
/// Exit status: 0 success, 1 runtime failure (for example the port is taken), 2 usage error.
enum Command {
    static let usage = """
    usage: liveactivity <command> [options]

    commands:
      serve     run the server (dashboard over HTTP, protocol over WebSocket at /ws)

    Run `liveactivity <command> --help` for a command's options.
    """

    /// Runs the command line and returns the process exit status.
    static func run(_ arguments: [String]) -> Int32 {
        guard let name = arguments.first else {
            printError(usage)
            return 2
        }
        let rest = Array(arguments.dropFirst())
        switch name {
        case "serve": return ServeCommand.run(rest)
        case "-h", "--help", "help":
            print(usage)
            return 0
        default:
            printError("liveactivity: unknown command \"\(name)\"\n\n\(usage)")
            return 2
        }
    }
}

/// Writes a line to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
