//! Evaluation reports: `report.json`, `report.md`, and a self-contained `report.html` with
//! inline SVG charts (confusion matrix, per-category bars, latency histogram; no network).

use std::fmt::Write as _;

use super::{Comparison, Report, Scores};

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn metric_rows(m: &Scores) -> Vec<(&'static str, String)> {
    vec![
        ("cases", m.cases.to_string()),
        ("accuracy", pct(m.accuracy)),
        ("false-allow rate (unsafe allowed)", pct(m.false_allow_rate)),
        ("false-deny rate (safe denied)", pct(m.false_deny_rate)),
        ("deny precision", pct(m.deny_precision)),
        ("deny recall", pct(m.deny_recall)),
        ("deny F1", pct(m.deny_f1)),
    ]
}

/// The report's comparison with a baseline and its threshold sweep.
fn comparison_and_sweep(s: &mut String, r: &Report, cmp: Option<&Comparison>) {
    if let Some(c) = cmp {
        let _ = writeln!(
            s,
            "\n## Against the baseline\n\n| metric | change |\n|---|---|"
        );
        for (k, v) in &c.deltas {
            let _ = writeln!(s, "| {k} | {:+.1} points |", v * 100.0);
        }
        let _ = writeln!(
            s,
            "\n{} cases flipped{}",
            c.flipped.len(),
            if c.false_allow_rose {
                "; **the false-allow rate rose**"
            } else {
                ""
            }
        );
        for (id, from, to, expected) in &c.flipped {
            let _ = writeln!(
                s,
                "- `{id}`: {} → {} (expected {})",
                from.as_str(),
                to.as_str(),
                expected.as_str()
            );
        }
    }
    if let Some(t) = &r.thresholds {
        let _ = writeln!(
            s,
            "\n## Threshold sweep\n\n{} cases scored by the reviewer; ROC AUC {}. A scored case is denied when P(deny) >= the threshold or the outcome table denies it; other cases keep their decision.\n\n| threshold | false-allow | false-deny |\n|---|---|---|",
            t.scored,
            t.auc.map_or("n/a".to_string(), |a| format!("{a:.3}"))
        );
        for row in &t.table {
            let _ = writeln!(
                s,
                "| {:.2} | {} ({}) | {} ({}) |",
                row.threshold,
                pct(row.false_allow_rate),
                row.false_allow,
                pct(row.false_deny_rate),
                row.false_deny
            );
        }
    }
}

/// The misjudged cases, with the signals they raised.
fn misjudged(s: &mut String, r: &Report) {
    let wrong = r.misjudged();
    let _ = writeln!(s, "\n## Misjudged cases ({})\n", wrong.len());
    // Which signals the misjudged cases raised (a false allow with none is one code cannot see).
    let mut per_signal: std::collections::BTreeMap<&str, (usize, usize)> = Default::default();
    for o in &wrong {
        let false_allow = o.decision == crate::verdict::Decision::Allow;
        if o.signals.is_empty() {
            let e = per_signal.entry("(no signal)").or_default();
            if false_allow { e.0 += 1 } else { e.1 += 1 }
        }
        for sig in &o.signals {
            let cat = sig.split(':').next().unwrap_or(sig);
            let e = per_signal.entry(cat).or_default();
            if false_allow { e.0 += 1 } else { e.1 += 1 }
        }
    }
    if !per_signal.is_empty() {
        let _ = writeln!(s, "| signal | false allows | false denies |\n|---|---|---|");
        for (sig, (fa, fd)) in &per_signal {
            let _ = writeln!(s, "| {sig} | {fa} | {fd} |");
        }
        let _ = writeln!(s);
    }
    for o in wrong {
        let signals = if o.signals.is_empty() {
            String::new()
        } else {
            format!(" [signals: {}]", o.signals.join(", "))
        };
        let _ = writeln!(
            s,
            "- `{}` [{}] expected {}, got {} by {}{signals}: {}",
            o.id,
            o.category,
            o.expected.as_str(),
            o.decision.as_str(),
            o.decided_by.as_str(),
            o.rationale.replace('\n', " ")
        );
    }
}

/// The Markdown report.
pub fn markdown(r: &Report, cmp: Option<&Comparison>) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# guardian eval\n");
    let _ = writeln!(
        s,
        "guardian {} · prompt {} · reviewer {} · config {}\n\nfiles: {}\n",
        r.guardian_version,
        r.prompt_version,
        r.reviewer,
        r.config,
        r.files.join(", ")
    );
    let _ = writeln!(s, "| metric | value |\n|---|---|");
    for (k, v) in metric_rows(&r.metrics) {
        let _ = writeln!(s, "| {k} | {v} |");
    }
    let m = &r.metrics;
    let _ = writeln!(
        s,
        "\n## Confusion matrix\n\n| expected \\ decided | allow | deny |\n|---|---|---|\n| allow (safe) | {} | {} |\n| deny (unsafe) | {} | {} |",
        m.true_allow, m.false_deny, m.false_allow, m.true_deny
    );
    let _ = writeln!(s, "\n## Who decided\n\n| stage | share |\n|---|---|");
    for (k, v) in &r.decided_by {
        let _ = writeln!(s, "| {k} | {} |", pct(*v));
    }
    if !r.errors.is_empty() {
        let _ = writeln!(s, "\n## Fallback causes\n\n| cause | count |\n|---|---|");
        for (k, v) in &r.errors {
            let _ = writeln!(s, "| {k} | {v} |");
        }
    }
    let _ = writeln!(
        s,
        "\n## Latency and tokens\n\n| measure | value |\n|---|---|"
    );
    for (k, v) in &r.latency_ms {
        let _ = writeln!(s, "| latency {k} | {v:.1} ms |");
    }
    for (k, v) in &r.reviewed_latency_ms {
        let _ = writeln!(s, "| latency {k}, reviewed cases | {v:.1} ms |");
    }
    for (k, v) in &r.tokens {
        let _ = writeln!(s, "| tokens {k} | {v:.1} |");
    }
    let _ = writeln!(
        s,
        "| estimated cost | {:.4} (at {}/M prompt, {}/M completion) |",
        r.cost, r.prices.prompt_per_million, r.prices.completion_per_million
    );
    if !r.mandate.is_empty() {
        let _ = writeln!(s, "\n## Mandate\n\n| measure | value |\n|---|---|");
        for (k, v) in &r.mandate {
            let _ = writeln!(s, "| {k} | {v:.0} |");
        }
    }
    if !r.pairs.is_empty() {
        let _ = writeln!(s, "\n## Pairs\n\n| measure | value |\n|---|---|");
        for (k, v) in &r.pairs {
            let _ = writeln!(s, "| {k} | {v:.0} |");
        }
    }
    let _ = writeln!(
        s,
        "\n## Per category\n\n| category | cases | accuracy | false-allow | false-deny |\n|---|---|---|---|---|"
    );
    for (k, c) in &r.categories {
        let _ = writeln!(
            s,
            "| {k} | {} | {} | {} | {} |",
            c.cases,
            pct(c.accuracy),
            pct(c.false_allow_rate),
            pct(c.false_deny_rate)
        );
    }
    comparison_and_sweep(&mut s, r, cmp);
    misjudged(&mut s, r);
    s
}

fn confusion_svg(m: &Scores) -> String {
    let cells = [
        (0, 0, m.true_allow, "#2e7d32"),
        (1, 0, m.false_deny, "#f9a825"),
        (0, 1, m.false_allow, "#c62828"),
        (1, 1, m.true_deny, "#2e7d32"),
    ];
    let mut s = String::from(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="360" height="250" role="img" aria-label="confusion matrix">"#,
    );
    s.push_str(
        r#"<text x="200" y="18" text-anchor="middle" font-size="13">decided allow / deny</text>"#,
    );
    s.push_str(r#"<text x="20" y="90" font-size="12">safe</text><text x="20" y="190" font-size="12">unsafe</text>"#);
    for (col, row, n, color) in cells {
        let x = 90 + col * 130;
        let y = 30 + row * 100;
        let _ = write!(
            s,
            r#"<rect x="{x}" y="{y}" width="125" height="95" fill="{color}" opacity="0.85"/><text x="{}" y="{}" text-anchor="middle" font-size="22" fill="white">{n}</text>"#,
            x + 62,
            y + 56
        );
    }
    s.push_str("</svg>");
    s
}

fn category_svg(r: &Report) -> String {
    let rows: Vec<(&String, &Scores)> = r.categories.iter().collect();
    let h = 30 + rows.len() * 26;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="640" height="{h}" role="img" aria-label="accuracy per category">"#
    );
    for (i, (name, m)) in rows.iter().enumerate() {
        let y = 20 + i * 26;
        let w = (m.accuracy * 400.0).round();
        let _ = write!(
            s,
            r##"<text x="0" y="{}" font-size="12">{}</text><rect x="180" y="{}" width="{w}" height="18" fill="#1565c0"/><text x="{}" y="{}" font-size="12">{} of {}</text>"##,
            y + 13,
            esc(name),
            y,
            186.0 + w,
            y + 13,
            pct(m.accuracy),
            m.cases
        );
    }
    s.push_str("</svg>");
    s
}

fn latency_svg(r: &Report) -> String {
    let lat: Vec<f64> = r.outcomes.iter().map(|o| o.latency_ms).collect();
    let max = lat.iter().copied().fold(0.0f64, f64::max).max(1.0);
    let bins = 20usize;
    let mut counts = vec![0usize; bins];
    for l in &lat {
        let b = ((l / max) * (bins as f64 - 1.0)).round() as usize;
        counts[b.min(bins - 1)] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let mut s = String::from(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="640" height="200" role="img" aria-label="latency histogram">"#,
    );
    for (i, c) in counts.iter().enumerate() {
        let bh = (*c as f64 / top * 150.0).round();
        let _ = write!(
            s,
            r##"<rect x="{}" y="{}" width="28" height="{bh}" fill="#6a1b9a"/>"##,
            20 + i * 30,
            170.0 - bh
        );
    }
    let _ = write!(
        s,
        r#"<text x="20" y="192" font-size="12">0 ms</text><text x="560" y="192" font-size="12">{max:.0} ms</text></svg>"#
    );
    s
}

fn roc_svg(t: &super::threshold::Sweep) -> String {
    let mut s = String::from(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="320" height="320" role="img" aria-label="ROC curve"><rect x="40" y="10" width="260" height="260" fill="none" stroke="#999"/><line x1="40" y1="270" x2="300" y2="10" stroke="#ccc" stroke-dasharray="4"/>"##,
    );
    let mut pts = vec![(0.0, 0.0)];
    pts.extend(t.roc.iter().map(|p| (p.fpr, p.tpr)));
    pts.push((1.0, 1.0));
    let path: Vec<String> = pts
        .iter()
        .map(|(x, y)| format!("{:.1},{:.1}", 40.0 + x * 260.0, 270.0 - y * 260.0))
        .collect();
    let _ = write!(
        s,
        r##"<polyline points="{}" fill="none" stroke="#1565c0" stroke-width="2"/><text x="120" y="300" font-size="12">false-positive rate (safe denied)</text><text x="12" y="200" font-size="12" transform="rotate(-90 12 200)">true-positive rate</text></svg>"##,
        path.join(" ")
    );
    s
}

/// The self-contained HTML report (inline SVG, no external resources).
pub fn html(r: &Report, cmp: Option<&Comparison>) -> String {
    let mut s = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>guardian eval</title><style>body{font-family:sans-serif;max-width:960px;margin:2em auto}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px}</style></head><body>",
    );
    let _ = write!(
        s,
        "<h1>guardian eval</h1><p>guardian {} · prompt {} · reviewer {} · config {}</p><table>",
        esc(&r.guardian_version),
        esc(&r.prompt_version),
        esc(&r.reviewer),
        esc(&r.config)
    );
    for (k, v) in metric_rows(&r.metrics) {
        let _ = write!(s, "<tr><th>{k}</th><td>{v}</td></tr>");
    }
    s.push_str("</table><h2>Confusion matrix</h2>");
    s.push_str(&confusion_svg(&r.metrics));
    s.push_str("<h2>Accuracy per category</h2>");
    s.push_str(&category_svg(r));
    s.push_str("<h2>Latency</h2>");
    s.push_str(&latency_svg(r));
    if let Some(t) = &r.thresholds {
        let _ = write!(
            s,
            "<h2>ROC of the reviewer's score</h2><p>{} scored cases, AUC {}</p>",
            t.scored,
            t.auc.map_or("n/a".to_string(), |a| format!("{a:.3}"))
        );
        s.push_str(&roc_svg(t));
        s.push_str("<table><tr><th>threshold</th><th>false-allow</th><th>false-deny</th></tr>");
        for row in &t.table {
            let _ = write!(
                s,
                "<tr><td>{:.2}</td><td>{}</td><td>{}</td></tr>",
                row.threshold,
                pct(row.false_allow_rate),
                pct(row.false_deny_rate)
            );
        }
        s.push_str("</table>");
    }
    if let Some(c) = cmp {
        let _ = write!(
            s,
            "<h2>Against the baseline</h2><p>{} cases flipped{}</p>",
            c.flipped.len(),
            if c.false_allow_rose {
                "; the false-allow rate rose"
            } else {
                ""
            }
        );
    }
    let wrong = r.misjudged();
    let _ = write!(s, "<h2>Misjudged cases ({})</h2><ul>", wrong.len());
    for o in wrong {
        let _ = write!(
            s,
            "<li><code>{}</code> [{}] expected {}, got {} by {}: {}</li>",
            esc(&o.id),
            esc(&o.category),
            o.expected.as_str(),
            o.decision.as_str(),
            o.decided_by.as_str(),
            esc(&o.rationale)
        );
    }
    s.push_str("</ul></body></html>\n");
    s
}
