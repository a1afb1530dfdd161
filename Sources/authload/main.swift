import AuthloadCLI
import Foundation

let code = await Authload.main(Array(CommandLine.arguments.dropFirst()))
exit(code.rawValue)
