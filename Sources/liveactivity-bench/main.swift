import Foundation
import LiveActivityCommandLine

// liveactivity-bench: fan-out benchmark for `liveactivity serve` (see BenchOptions.usage).

let arguments = Array(CommandLine.arguments.dropFirst())
let options: BenchOptions
do throws(UsageError) {
    guard let parsed = try BenchOptions.parse(arguments) else {
        print(BenchOptions.usage)
        exit(0)
    }
    options = parsed
} catch {
    try? FileHandle.standardError.write(contentsOf: Data("liveactivity-bench: \(error.message)\n\n\(BenchOptions.usage)\n".utf8))
    exit(2)
}
let result = FanOutBench(options: options).run()
let line = result.jsonLine()
try? FileHandle.standardOutput.write(contentsOf: Data((line + "\n" + result.table() + "\n").utf8))
if let path = options.outputPath {
    if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
    if let handle = FileHandle(forWritingAtPath: path) {
        handle.seekToEndOfFile()
        handle.write(Data((line + "\n").utf8))
        try? handle.close()
    }
}
exit(result["ok"] as? Bool == true ? 0 : 1)
