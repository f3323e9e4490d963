//! The full `guardian.toml` example of the configuration reference (docs/configuration.md) is a
//! config guardian accepts, and every value it
//! shows for a setting with a default is that default: defaults live in one place per section
//! (`impl Default`), and the documentation cannot drift from them.

use guardian::Config;

fn readme_example() -> String {
    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/configuration.md"
    ))
    .expect("docs/configuration.md");
    let section = readme
        .split("# Configuration reference")
        .nth(1)
        .expect("a configuration reference section");
    let start = section.find("```toml\n").expect("a toml block") + "```toml\n".len();
    let len = section[start..].find("```").expect("the block ends");
    section[start..start + len].to_string()
}

#[test]
fn the_readme_config_parses_and_shows_the_defaults() {
    let text = readme_example();
    let cfg = Config::parse(&text, "README.md").unwrap_or_else(|e| panic!("{e}\n{text}"));
    let d = Config::default();
    // Sections shown entirely at their defaults.
    assert_eq!(
        format!("{:?}", cfg.server),
        format!("{:?}", d.server),
        "[server]"
    );
    assert_eq!(
        format!("{:?}", cfg.breaker),
        format!("{:?}", d.breaker),
        "[breaker]"
    );
    assert_eq!(cfg.session, d.session, "[session]");
    assert_eq!(
        format!("{:?}", cfg.limits),
        format!("{:?}", d.limits),
        "[limits]"
    );
    assert_eq!(
        format!("{:?}", cfg.hooks),
        format!("{:?}", d.hooks),
        "[hooks]"
    );
    assert_eq!(cfg.mandate, d.mandate, "[mandate]");
    assert_eq!(
        format!("{:?}", cfg.reviewer.budget),
        format!("{:?}", d.reviewer.budget),
        "[reviewer.budget]"
    );
    // The reviewer and audit settings that have defaults (the rest are examples).
    let (r, dr) = (&cfg.reviewer, &d.reviewer);
    assert_eq!(r.timeout_ms, dr.timeout_ms);
    assert_eq!(r.max_output_tokens, dr.max_output_tokens);
    assert_eq!(r.max_attempts, dr.max_attempts);
    assert_eq!(r.memory_ttl_s, dr.memory_ttl_s);
    assert_eq!(r.two_stage, dr.two_stage);
    assert_eq!(r.scoring, dr.scoring);
    assert_eq!(r.deny_threshold, dr.deny_threshold);
    assert_eq!(r.authorization_threshold, dr.authorization_threshold);
    assert_eq!(
        r.authorization_high_threshold,
        dr.authorization_high_threshold
    );
    assert_eq!(r.explain, dr.explain);
    assert_eq!(r.evidence, dr.evidence);
    assert_eq!(r.warm_up, dr.warm_up);
    let (a, da) = (&cfg.audit, &d.audit);
    assert_eq!(a.redact, da.redact);
    assert_eq!(a.redact_patterns, da.redact_patterns);
    assert_eq!(a.fsync, da.fsync);
    assert_eq!(a.fsync_interval_ms, da.fsync_interval_ms);
    assert_eq!(a.rotate_bytes, da.rotate_bytes);
    assert_eq!(a.rotate_interval, da.rotate_interval);
    assert_eq!(a.keep_segments, da.keep_segments);
    assert_eq!(a.keep_days, da.keep_days);
    assert_eq!(a.compress, da.compress);
    assert_eq!(a.mirror, da.mirror);
    assert_eq!(
        a.path.file_name(),
        da.path.file_name(),
        "the audit file's name"
    );
}

#[test]
fn a_section_left_out_is_its_default() {
    let cfg = Config::parse("[server]\nlisten = \"127.0.0.1:9\"\n", "g.toml").expect("parses");
    let d = Config::default();
    assert_eq!(cfg.server.listen, "127.0.0.1:9");
    assert_eq!(cfg.server.max_body_bytes, d.server.max_body_bytes);
    assert_eq!(format!("{:?}", cfg.breaker), format!("{:?}", d.breaker));
    assert_eq!(cfg.audit.rotate_bytes, 100 * 1024 * 1024);
}
