//! Supply-chain signals: installs from unknown sources and look-alikes of popular packages.

use super::*;

pub(super) fn supply_chain_signals(c: &SimpleCommand, name: &str, out: &mut Vec<Signal>) {
    let a = args(c);
    let installers = [
        "pip", "pip3", "uv", "pipx", "npm", "pnpm", "yarn", "bun", "cargo", "gem", "go", "poetry",
        "npx",
    ];
    let name_ok = installers.contains(&name)
        || name.starts_with("pip3.")
        || name.starts_with("python") && a.first().is_some_and(|x| x == "-m");
    if !name_ok {
        return;
    }
    let pip_like = name.starts_with("pip")
        || name == "uv"
        || name.starts_with("python") && a.get(1).is_some_and(|x| x == "pip");
    let index = a.iter().enumerate().find_map(|(i, x)| {
        for f in [
            "--index-url",
            "--extra-index-url",
            "--registry",
            "--find-links",
            "--index",
            "--git",
            "--trusted-host",
        ] {
            if x == f {
                return Some(format!("{f} {}", a.get(i + 1).map_or("", String::as_str)));
            }
            if let Some(v) = x.strip_prefix(&format!("{f}=")) {
                return Some(format!("{f} {v}"));
            }
        }
        // `-i` is pip's `--index-url`; to cargo (`cargo tree -i`: invert) and the others it
        // is something else.
        (x == "-i" && pip_like).then(|| format!("-i {}", a.get(i + 1).map_or("", String::as_str)))
    });
    if let Some(idx) = index {
        out.push(sig(
            Category::SupplyChain,
            Severity::High,
            format!("`{}` installs from a non-default source ({idx})", c.text),
            idx.split_whitespace().nth(1).unwrap_or(&idx),
        ));
        return;
    }
    if name == "npm"
        && a.windows(3)
            .any(|w| w[0] == "config" && w[1] == "set" && w[2].starts_with("registry"))
    {
        out.push(sig(
            Category::SupplyChain,
            Severity::High,
            format!("`{}` changes the npm registry", c.text),
            "registry",
        ));
        return;
    }
    typosquat_signals(c, name, out);
    let installs = a
        .iter()
        .any(|x| matches!(x.as_str(), "install" | "add" | "i"));
    if !installs {
        return;
    }
    for x in a.iter().filter(|x| !x.starts_with('-')) {
        let remote = x.starts_with("git+")
            || x.starts_with("http://")
            || x.starts_with("https://")
            || x.starts_with("github:")
            || x.starts_with("git@")
            || x.ends_with(".tar.gz")
            || x.ends_with(".tgz")
            || x.ends_with(".whl") && x.contains("://");
        if remote {
            out.push(sig(
                Category::SupplyChain,
                Severity::High,
                format!("`{}` installs from {x}", c.text),
                x,
            ));
        }
    }
}

/// Popular packages per ecosystem, whose look-alikes are how typosquatting gets installed.
pub(super) const POPULAR_NPM: &[&str] = &[
    "react",
    "react-dom",
    "lodash",
    "express",
    "axios",
    "chalk",
    "commander",
    "moment",
    "request",
    "debug",
    "cross-env",
    "dotenv",
    "typescript",
    "webpack",
    "eslint",
    "prettier",
    "jest",
    "mocha",
    "nodemon",
    "uuid",
    "yargs",
    "rimraf",
    "mkdirp",
    "underscore",
    "bluebird",
    "body-parser",
    "jsonwebtoken",
    "bcrypt",
    "mongoose",
    "socket.io",
    "redux",
    "vitest",
    "electron",
    "puppeteer",
    "cheerio",
    "semver",
    "minimist",
    "inquirer",
    "date-fns",
    "dayjs",
    "node-fetch",
    "fs-extra",
    "esbuild",
    "rollup",
    "tailwindcss",
    "postcss",
    "jquery",
    "bootstrap",
    "nodemailer",
    "coffee-script",
    "babel-cli",
    "http-proxy",
    "event-stream",
    "ua-parser-js",
    "discord.js",
];
pub(super) const POPULAR_PYPI: &[&str] = &[
    "requests",
    "urllib3",
    "python-dateutil",
    "numpy",
    "pandas",
    "django",
    "flask",
    "fastapi",
    "pyyaml",
    "setuptools",
    "boto3",
    "botocore",
    "certifi",
    "charset-normalizer",
    "cryptography",
    "pytest",
    "pillow",
    "matplotlib",
    "scipy",
    "scikit-learn",
    "beautifulsoup4",
    "sqlalchemy",
    "jinja2",
    "colorama",
    "httpx",
    "pydantic",
    "psycopg2",
    "celery",
    "selenium",
    "openai",
    "tensorflow",
    "virtualenv",
    "uvicorn",
    "gunicorn",
    "aiohttp",
    "jsonschema",
    "simplejson",
    "python-dotenv",
    "opencv-python",
    "pycryptodome",
    "paramiko",
    "docutils",
    "markdown",
];
pub(super) const POPULAR_GO: &[&str] = &[
    "github.com/gorilla/mux",
    "github.com/sirupsen/logrus",
    "github.com/spf13/cobra",
    "github.com/spf13/viper",
    "github.com/stretchr/testify",
    "github.com/gin-gonic/gin",
    "github.com/pkg/errors",
    "github.com/google/uuid",
    "github.com/golang/protobuf",
    "google.golang.org/grpc",
    "github.com/labstack/echo",
    "github.com/go-chi/chi",
    "go.uber.org/zap",
    "github.com/jackc/pgx",
    "github.com/lib/pq",
    "gorm.io/gorm",
    "github.com/redis/go-redis",
    "github.com/prometheus/client_golang",
    "github.com/urfave/cli",
];
pub(super) const POPULAR_CRATES: &[&str] = &[
    "serde",
    "serde_json",
    "tokio",
    "rand",
    "clap",
    "reqwest",
    "regex",
    "anyhow",
    "thiserror",
    "env_logger",
    "chrono",
    "hyper",
    "axum",
    "futures",
    "lazy_static",
    "once_cell",
    "itertools",
    "proc-macro2",
    "rayon",
    "tracing",
    "bytes",
    "base64",
    "url",
];
pub(super) const POPULAR_GEMS: &[&str] = &[
    "rails", "rake", "bundler", "nokogiri", "rspec", "devise", "puma", "sinatra", "rack",
];

/// The popular package `pkg` imitates, if it is a look-alike: the same name of five letters or
/// more once `-`, `_`, `.` and digits are dropped (`crossenv`, `python3-dateutil`; not `boto`
/// for `boto3`), or one edit away from a name of at least six letters (`gorillla/mux`,
/// `reqeusts`, a transposition counting as one).
pub(super) fn typosquat_of(pkg: &str, popular: &'static [&'static str]) -> Option<&'static str> {
    let pkg = pkg.to_ascii_lowercase();
    if pkg.is_empty() || popular.contains(&pkg.as_str()) {
        return None;
    }
    let squash = |s: &str| -> String {
        s.chars()
            .filter(|c| !matches!(c, '-' | '_' | '.') && !c.is_ascii_digit())
            .collect()
    };
    let squashed = squash(&pkg);
    popular.iter().copied().find(|p| {
        (squashed.len() >= 5 && squash(p) == squashed)
            || (p.len() >= 6 && strsim::damerau_levenshtein(p, &pkg) == 1)
    })
}

/// Installs (and `npx` runs) of a package whose name imitates a popular one.
pub(super) fn typosquat_signals(c: &SimpleCommand, name: &str, out: &mut Vec<Signal>) {
    let a = args(c);
    let popular = match name {
        "npm" | "pnpm" | "yarn" | "bun" | "npx" => POPULAR_NPM,
        "go" => POPULAR_GO,
        "cargo" => POPULAR_CRATES,
        "gem" => POPULAR_GEMS,
        _ => POPULAR_PYPI,
    };
    let operands: Vec<&String> = a.iter().filter(|x| !x.starts_with('-')).collect();
    let packages: Vec<&String> = if name == "npx" {
        operands.into_iter().take(1).collect()
    } else {
        let Some(i) = operands
            .iter()
            .position(|x| matches!(x.as_str(), "install" | "add" | "i" | "get"))
        else {
            return;
        };
        operands.into_iter().skip(i + 1).collect()
    };
    for p in packages {
        // The name without its version or extras: `x@1.2`, `x==1.2`, `x[extra]`, `@scope/x@1`.
        let bare = match p.char_indices().skip(1).find(|(_, ch)| *ch == '@') {
            Some((i, _)) => &p[..i],
            None => p.as_str(),
        };
        let bare = bare
            .split(['=', '<', '>', '~', '!', '[', ';'])
            .next()
            .unwrap_or(bare);
        if let Some(real) = typosquat_of(bare, popular) {
            out.push(sig(
                Category::SupplyChain,
                Severity::Critical,
                format!(
                    "`{}` installs `{bare}`, a look-alike of the popular package `{real}` (typosquatting)",
                    c.text
                ),
                bare,
            ));
        }
    }
}
