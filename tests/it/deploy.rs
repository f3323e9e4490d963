//! The deployment files (`deploy/`) say what the fleet docs say: the replicas' config and the
//! Kubernetes ConfigMap's are configs guardian loads, with the Redis store and the local
//! model's shipped scoring; the plumbing config for the small model loads; the compose file
//! starts two replicas, Redis, the model server and a balancer that routes `/v1/*` across both;
//! the image runs as a non-root user. These read the files only: the images are built and the
//! fleet run for real by `scripts/fleet-compose.sh up --small` and `test` in `.ci/run`
//! (`tests/e2e/fleet_compose.py`), and the Kubernetes YAML is checked against the Kubernetes
//! schemas by `scripts/k8s-validate.sh`.

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn check_fleet_config(text: &str, name: &str) {
    let cfg = guardian::Config::parse(text, name).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        cfg.session.store,
        guardian::config::StoreKind::Redis,
        "{name}"
    );
    // The local model's shipped scoring, as `guardian serve` sets it up: the shipped probe,
    // its threshold and the hash of the model it reads.
    assert_eq!(
        cfg.reviewer.scoring,
        guardian::config::Scoring::Probe,
        "{name}"
    );
    let probe = guardian::reviewer::probe::Probe::embedded().expect("the shipped probe");
    assert_eq!(
        cfg.reviewer.model_sha256.as_deref(),
        Some(probe.model_sha256.as_str()),
        "{name}"
    );
    assert!(
        read("scripts/local-model.sh").contains(&probe.model_sha256),
        "the model image installs the model the probe reads"
    );
    assert!(
        matches!(cfg.audit.mirror, guardian::config::AuditMirror::Stdout),
        "{name}: audit records reach the log shipper"
    );
    assert_eq!(
        format!("{:.4}", cfg.reviewer.deny_threshold),
        format!("{:.4}", guardian::decision::local_probe(&probe).deny),
        "{name}: the shipped probe's threshold"
    );
    let t = guardian::decision::local_probe(&probe);
    assert_eq!(
        (
            cfg.reviewer.authorization_threshold,
            cfg.reviewer.authorization_high_threshold
        ),
        (t.authorization, t.authorization_high),
        "{name}: the dedicated authorization prompt's thresholds"
    );
}

#[test]
fn the_replicas_config_loads_with_redis_and_the_local_models_scoring() {
    check_fleet_config(&read("deploy/guardian.toml"), "deploy/guardian.toml");
}

#[test]
fn the_kubernetes_configmap_holds_a_config_that_loads() {
    let yaml = read("deploy/k8s/guardian.yaml");
    let start = yaml
        .find("guardian.toml: |\n")
        .expect("a guardian.toml in the ConfigMap")
        + "guardian.toml: |\n".len();
    let block: String = yaml[start..]
        .lines()
        .take_while(|l| l.starts_with("    ") || l.is_empty())
        .map(|l| format!("{}\n", l.strip_prefix("    ").unwrap_or(l)))
        .collect();
    check_fleet_config(&block, "deploy/k8s/guardian.yaml");
    for needed in [
        "readinessProbe",
        "path: /healthz",
        "kind: Service",
        "runAsNonRoot: true",
    ] {
        assert!(yaml.contains(needed), "{needed}");
    }
}

#[test]
fn compose_starts_two_replicas_redis_the_model_and_a_balancer() {
    let compose = read("deploy/compose.yaml");
    for service in [
        "redis:",
        "model:",
        "guardian-1:",
        "guardian-2:",
        "balancer:",
    ] {
        assert!(compose.contains(&format!("\n  {service}")), "{service}");
    }
    let nginx = read("deploy/nginx.conf");
    assert!(nginx.contains("server guardian-1:8700") && nginx.contains("server guardian-2:8700"));
    assert!(nginx.contains("location /v1/"));
    let image = read("deploy/Dockerfile");
    assert!(image.contains("USER 10001") && image.contains("FROM debian:bookworm-slim"));
    assert!(image.contains("VOLUME [\"/var/lib/guardian\"]"));
}

/// The small model's config (compose's `GUARDIAN_FLEET_CONFIG=guardian.small.toml`) loads, with
/// Redis and a schema-constrained verdict (SmolLM2 has no probe), and compose mounts the file it
/// names and builds the model the variable selects.
#[test]
fn the_small_fleet_config_loads_and_compose_selects_it() {
    let cfg = guardian::Config::parse(
        &read("deploy/guardian.small.toml"),
        "deploy/guardian.small.toml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cfg.session.store, guardian::config::StoreKind::Redis);
    assert_eq!(cfg.reviewer.scoring, guardian::config::Scoring::Label);
    assert_eq!(cfg.reviewer.model, "smollm2-135m");
    let compose = read("deploy/compose.yaml");
    assert!(
        compose
            .contains("./${GUARDIAN_FLEET_CONFIG:-guardian.toml}:/etc/guardian/guardian.toml:ro")
    );
    assert!(compose.contains("MODEL: ${GUARDIAN_FLEET_MODEL:-qwen}"));
    let model = read("deploy/Dockerfile.model");
    assert!(model.contains("ARG MODEL=qwen") && model.contains("small) flag=--small"));
    let image = read("deploy/Dockerfile");
    assert!(image.contains("HEALTHCHECK") && image.contains("guardian\", \"health"));
    assert!(image.contains("org.opencontainers.image.title"));
}
