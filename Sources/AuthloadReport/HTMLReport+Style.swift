extension HTMLReport {
    /// The page's measures, which the stylesheet uses and the layout test checks the widest table against.
    ///
    /// The flows table has 17 columns; at 1280 px, a common laptop width, it must fit beside nothing else, so the
    /// page takes the window's width up to `maxWidth` and the table's cells are tight and its names may wrap.
    enum Layout {
        /// The page's widest content box plus its side padding.
        static let maxWidth = 1440
        static let sidePadding = 24
        /// Horizontal padding of a table cell, each side.
        static let cellPadding = 6
        /// Table text size; headers are a pixel smaller.
        static let tableFontSize = 13
        /// Extra indent of a step's name under its flow.
        static let stepIndent = 14
    }

    /// The page's only stylesheet, inlined so the report needs nothing but itself.
    ///
    /// Fonts are the platform's own (no web fonts: they would need the network); numbers use tabular
    /// figures so columns line up.
    static let stylesheet = """
        :root {
          --ink: #1f2933; --muted: #616e7c; --line: #d9e2ec; --panel: #f5f7fa;
          --bad: #c53030; --bad-bg: #fff5f5; --warn-bg: #fffaf0; --warn-line: #dd6b20; --ok: #2f855a;
        }
        * { box-sizing: border-box; }
        body {
          margin: 0; background: #fff; color: var(--ink);
          font: 14px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Arial,
            "Noto Sans", "Liberation Sans", sans-serif;
        }
        main { max-width: \(Layout.maxWidth)px; margin: 0 auto; padding: 28px \(Layout.sidePadding)px 48px; }
        h1 { font-size: 26px; margin: 2px 0 14px; font-weight: 650; overflow-wrap: anywhere; }
        h2 { font-size: 17px; margin: 36px 0 8px; font-weight: 650; border-bottom: 1px solid var(--line);
             padding-bottom: 6px; }
        .eyebrow { margin: 0; color: var(--muted); font-size: 12px; letter-spacing: .06em; text-transform: uppercase; }
        .status { display: inline-block; vertical-align: middle; font-size: 12px; font-weight: 600;
                  letter-spacing: .04em; text-transform: uppercase; padding: 2px 9px; border-radius: 10px;
                  border: 1px solid currentColor; }
        .status-completed { color: var(--ok); }
        .status-interrupted, .status-failed, .status-aborted { color: #fff; background: var(--bad); border-color: var(--bad); }
        .status-simulated { color: var(--muted); border-style: dashed; }
        .facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 6px 24px;
                 margin: 0; padding: 12px 16px; background: var(--panel); border-radius: 6px; }
        .facts div { min-width: 0; }
        .facts dt { color: var(--muted); font-size: 12px; }
        .facts dd { margin: 0; overflow-wrap: anywhere; font-variant-numeric: tabular-nums; }
        .callout { margin: 18px 0 0; padding: 12px 16px; border-left: 4px solid var(--warn-line);
                   background: var(--warn-bg); border-radius: 0 6px 6px 0; }
        .callout-bad { border-left-color: var(--bad); background: var(--bad-bg); color: #742a2a; }
        .callout ul { margin: 6px 0 0; padding-left: 20px; }
        .callout li { overflow-wrap: anywhere; }
        .tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); gap: 12px; margin-top: 20px; }
        .tile { border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; }
        .tile span { display: block; color: var(--muted); font-size: 12px; }
        .tile strong { font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
        .tile-bad strong { color: var(--bad); }
        .hint { color: var(--muted); margin: 4px 0 12px; font-size: 13px; }
        .hint.bad { color: var(--bad); }
        .table-wrap { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums;
                font-size: \(Layout.tableFontSize)px; }
        th, td { padding: 5px \(Layout.cellPadding)px; text-align: right; border-bottom: 1px solid var(--line);
                 white-space: nowrap; }
        th { font-size: \(Layout.tableFontSize - 1)px; font-weight: 600; color: var(--muted); background: var(--panel);
             white-space: normal; }
        th.text, td.text { text-align: left; }
        td.text { white-space: normal; overflow-wrap: anywhere; }
        th[rowspan] { vertical-align: bottom; }
        th.group { text-align: center; border-bottom: 1px solid #bcccdc; padding-bottom: 2px; }
        td.detail { white-space: normal; overflow-wrap: anywhere; font-family: ui-monospace, SFMono-Regular,
                    Menlo, Consolas, "Liberation Mono", monospace; font-size: 13px; }
        td.empty { color: var(--muted); }
        tr.flow-row td { font-weight: 600; background: #fbfcfd; border-top: 1px solid #bcccdc; }
        td.step { padding-left: \(Layout.cellPadding + Layout.stepIndent)px; color: #3e4c59; }
        td.bad { color: var(--bad); font-weight: 600; }
        .kind { display: inline-block; padding: 0 7px; border-radius: 9px; background: var(--panel);
                border: 1px solid var(--line); font-size: 12px; }
        figure.chart-box { margin: 12px 0; padding: 8px; border: 1px solid var(--line); border-radius: 6px; }
        .chart-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(460px, 1fr)); gap: 0 16px; }
        svg.chart { display: block; width: 100%; height: auto; font-family: inherit; }
        svg.chart text { fill: var(--muted); font-size: 12px; }
        svg.chart .chart-title { fill: var(--ink); font-size: 15px; font-weight: 600; }
        svg.chart .legend { fill: var(--ink); }
        svg.chart .axis-label { font-size: 12px; }
        svg.chart .chart-empty { font-size: 14px; }
        svg.chart.compact text { font-size: 14px; }
        svg.chart.compact .chart-title { font-size: 17px; }
        svg.chart .grid { stroke: #e4e7eb; stroke-width: 1; }
        svg.chart .tick, svg.chart .baseline { stroke: #9aa5b1; stroke-width: 1; }
        svg.chart .line { fill: none; stroke-width: 1.75; stroke-linejoin: round; stroke-linecap: round; }
        footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
        @media print { main { padding: 0; } figure.chart-box, table { break-inside: avoid; } }
        """
}
