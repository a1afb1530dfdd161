/// Where a threshold stands while a run goes on, for live metrics.
///
/// A verdict is only final at the end; before that a threshold can hold, fail, or not be judged yet. Pending
/// is a state of its own because a windowed threshold is judged only once its first window has settled (the
/// ramp-up, a window and the flow timeout after the start): shown as failing until then, a run that passes
/// would read red on a dashboard for its first minutes.
public enum ThresholdState: String, Sendable, CaseIterable {
    /// Not judged yet: no window has settled, no sample has finished, or a whole-run throughput before the end.
    case pending
    /// Holds on what has been judged so far.
    case passing
    /// Fails on what has been judged so far (every window judged counts: one failing window fails the run).
    case failing
}
