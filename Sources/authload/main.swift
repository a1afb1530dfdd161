import AuthloadCLI
import Foundation

// Before anything runs: a simulation starts again with glibc's cache sized for it (it reads the setting only at start).
AllocatorTuning.restartIfSimulating(CommandLine.arguments)
let code = await Authload.main(Array(CommandLine.arguments.dropFirst()))
exit(code.rawValue)
