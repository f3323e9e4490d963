//! Option tables of the build, test and lint tools the default policy allows.
//!
//! One option a line: `NAMES [VALUE] [EFFECT[: why]]`. An option missing
//! here sends the command to a reviewer, so the tables aim to be complete for
//! common options and honest about every effect.

// ---------------------------------------------------------------------------
// Shared cargo blocks
// ---------------------------------------------------------------------------

/// Cargo's global options that are also accepted after a subcommand.
macro_rules! cargo_global_after {
    () => {
        r#"
-v --verbose
-vv
-q --quiet
--color =
--locked
--offline
--frozen
--config = config: a KEY=VALUE or a file can set runners, linkers and paths
-Z = config: unstable flags
-h --help
"#
    };
}

/// Package selection, shared by the compiling subcommands.
macro_rules! cargo_package_selection {
    () => {
        r#"
-p --package =
--workspace
--all
--exclude =
"#
    };
}

/// Target selection, shared by build, check, clippy, test and bench.
macro_rules! cargo_target_selection {
    () => {
        r#"
--lib
--bins
--bin =
--examples
--example =
--tests
--test =
--benches
--bench =
--all-targets
"#
    };
}

/// Feature selection, compilation, manifest and output options shared by
/// build, check, clippy, test and bench.
macro_rules! cargo_compilation {
    () => {
        r#"
-F --features =
--all-features
--no-default-features
-j --jobs =
--keep-going
-r --release
--profile =
--target =
--target-dir = write-tree: writes the build under that directory
--unit-graph
--build-plan
--timings =?
--future-incompat-report
--ignore-rust-version
--message-format =
--manifest-path = read
--lockfile-path = write: reads and updates the lockfile at that path
"#
    };
}

// ---------------------------------------------------------------------------
// Cargo
// ---------------------------------------------------------------------------

/// `cargo` (global options before the subcommand).
pub const CARGO: &str = r#"
-V --version
--list
--explain =
-v --verbose
-vv
-q --quiet
--color =
-C = config: runs cargo as if started in that directory
--locked
--offline
--frozen
--config = config: a KEY=VALUE or a file can set runners, linkers and paths
-Z = config: unstable flags
-h --help
"#;

/// `cargo build`.
pub const CARGO_BUILD: &str = concat!(
    cargo_global_after!(),
    cargo_package_selection!(),
    cargo_target_selection!(),
    cargo_compilation!(),
    r#"
--artifact-dir --out-dir = write
"#
);

/// `cargo check`.
pub const CARGO_CHECK: &str = concat!(
    cargo_global_after!(),
    cargo_package_selection!(),
    cargo_target_selection!(),
    cargo_compilation!(),
);

/// `cargo clippy`.
pub const CARGO_CLIPPY: &str = concat!(
    cargo_global_after!(),
    cargo_package_selection!(),
    cargo_target_selection!(),
    cargo_compilation!(),
    r#"
--fix changes: edits source files
--allow-dirty
--allow-staged
--allow-no-vcs
--broken-code
--no-deps
--explain =
-V --version
"#
);

/// `cargo test`.
pub const CARGO_TEST: &str = concat!(
    cargo_global_after!(),
    cargo_package_selection!(),
    cargo_target_selection!(),
    cargo_compilation!(),
    r#"
--doc
--no-run
--no-fail-fast
"#
);

/// `cargo bench`.
pub const CARGO_BENCH: &str = concat!(
    cargo_global_after!(),
    cargo_package_selection!(),
    cargo_target_selection!(),
    cargo_compilation!(),
    r#"
--no-run
--no-fail-fast
"#
);

/// `cargo tree`: prints the dependency graph (it may resolve and write `Cargo.lock`, as a build
/// does).
pub const CARGO_TREE: &str = concat!(
    cargo_global_after!(),
    r#"
-p --package =
--workspace
--all
--exclude =
-e --edges =
-i --invert =
--prune =
--depth =
--prefix =
--no-dedupe
-d --duplicates
--charset =
-f --format =
-F --features =
--all-features
--no-default-features
--target =
--all-targets
--no-dev-dependencies
--no-indent
--prefix-depth
--manifest-path = read
--lockfile-path = write: reads and updates the lockfile at that path
--ignore-rust-version
"#
);

/// `cargo metadata`: prints the workspace's packages and their resolved dependencies as JSON.
pub const CARGO_METADATA: &str = concat!(
    cargo_global_after!(),
    r#"
--no-deps
--format-version =
--filter-platform =
-F --features =
--all-features
--no-default-features
--manifest-path = read
--lockfile-path = write: reads and updates the lockfile at that path
"#
);

/// `cargo clean`: deletes the workspace's target directory, which a build recreates. Another
/// directory named as the target is deleted whatever it holds, so naming one is an effect.
pub const CARGO_CLEAN: &str = concat!(
    cargo_global_after!(),
    r#"
-p --package =
--doc
-n --dry-run
-r --release
--profile =
--target =
--target-dir = changes: deletes that directory, whatever it holds
--manifest-path = read
--lockfile-path = write: reads and updates the lockfile at that path
"#
);

/// `cargo fmt` (without `--check` it rewrites the source files; that is the
/// subcommand's job, not an option's).
pub const CARGO_FMT: &str = r#"
--check
--all
-p --package =
--manifest-path = read
--message-format =
-v --verbose
-vv
-q --quiet
--version
-h --help
"#;

/// `cargo nextest run` (also `cargo nextest r`, `cargo ntr`).
pub const CARGO_NEXTEST_RUN: &str = concat!(
    cargo_package_selection!(),
    cargo_target_selection!(),
    r#"
# cargo options passed through
-F --features =
--all-features
--no-default-features
--build-jobs =
-r --release
--cargo-profile =
--target =
--target-dir = write-tree: writes the build under that directory
--unit-graph
--timings =?
--frozen
--locked
--offline
--cargo-quiet
--cargo-verbose
--ignore-rust-version
--future-incompat-report
--config = config: a KEY=VALUE or a file can set runners, linkers and paths
-Z = config: unstable flags

# nextest's own
--manifest-path = read
--config-file = config: nextest config can define setup and wrapper scripts
--tool-config-file = config: nextest config can define setup and wrapper scripts
--override-version-check
-P --profile =
--color =
-v --verbose
--no-pager
-h --help

# filters
--run-ignored =
--partition =
--platform-filter =
-E --filterset --filter-expr =
--ignore-default-filter

# runner
--no-run
-j --test-threads --jobs =
--retries =
--fail-fast --ff
--no-fail-fast --nff
--max-fail =
--no-tests =
--stress-count =
--stress-duration =
--no-capture --nocapture
--debugger = script: runs each test under that command
--tracer = script: runs each test under that command

# reporter
--failure-output =
--success-output =
--status-level =
--final-status-level =
--show-progress =
--hide-progress-bar
--no-output-indent
--no-input-handler
--max-progress-running =
--message-format =
--message-format-version =

# reusing builds: these name the test binaries that are run
--archive-file = program: runs the test binaries in that archive
--archive-format =
--extract-to = write
--extract-overwrite
--persist-extract-tempdir
--binaries-metadata = program: lists the test binaries to run
--target-dir-remap = program: holds the test binaries to run
--cargo-metadata = read
--workspace-remap = read
"#
);

/// Arguments of the libtest harness, after `cargo test --`.
pub const LIBTEST: &str = r#"
--include-ignored
--ignored
--exclude-should-panic
--force-run-in-process
--test
--bench
--list
--logfile = write
--nocapture
--no-capture
--test-threads =
--skip =
-q --quiet
--exact
--color =
--format =
--show-output
--report-time
--ensure-time
--shuffle
--shuffle-seed =
-Z =
-h --help
"#;

/// Arguments of a Criterion benchmark, after `cargo bench --`.
pub const CRITERION: &str = r#"
-c --color --colour =
-v --verbose
--quiet
-n --noplot
-s --save-baseline = write: a directory name under target/criterion; a path escapes it
--discard-baseline
-b --baseline = read
--baseline-lenient = read
--load-baseline = read
--list
--format =
--ignored
--include-ignored
--exact
--profile-time =
--sample-size =
--warm-up-time =
--measurement-time =
--nresamples =
--noise-threshold =
--confidence-level =
--significance-level =
--quick
--test
--bench
--plotting-backend =
--output-format =
--nocapture
--show-output
-V --version
-h --help
"#;

/// Arguments of clippy-driver, after `cargo clippy --`.
pub const CLIPPY_ARGS: &str = r#"
-D --deny =
-W --warn =
-A --allow =
-F --forbid =
--force-warn =
--cap-lints =
--no-deps
"#;

/// Arguments of rustfmt, after `cargo fmt --`.
pub const RUSTFMT_ARGS: &str = r#"
--check
--emit =
--backup changes: writes .bk copies next to the formatted files
--config-path = read
--config =
--edition =
--style-edition =
--color =
--print-config =2 write@2: writes the config of that kind (default, minimal, current) to the path after it
-l --files-with-diff
-v --verbose
-q --quiet
--unstable-features
--error-on-unformatted
--skip-children
--file-lines =
-h --help =?
-V --version
"#;

// ---------------------------------------------------------------------------
// JavaScript
// ---------------------------------------------------------------------------

/// `npm test`, `npm run <script>` (npm's own options; npm treats any other
/// `--name` as a config setting, hence the closed list).
pub const NPM: &str = r#"
-s --silent
-q --quiet
-d
-dd --verbose
-ddd
--loglevel =
--if-present
--ignore-scripts
--foreground-scripts
--no-foreground-scripts
-w --workspace =
-ws --workspaces
--no-workspaces
--include-workspace-root
--color =?
--no-color
--json
-p --parseable
--unicode
--no-unicode
--progress
--no-progress
--timing
--offline
--prefer-offline
--prefer-online
--no-update-notifier
--update-notifier
--no-fund
--no-audit
-y --yes
--logs-max =
--logs-dir = write
--prefix -C = write
--cache = write
--script-shell = program
--shell = program
--node-options = program
--userconfig = config
--globalconfig = config
--registry = config
--usage
-h --help
-v --version
"#;

/// Arguments passed after `--` to a package.json script (`npm test -- …`).
/// The script is unknown, so only flags of common test runners and bundlers
/// whose effect is clear in any of them.
pub const SCRIPT_ARGS: &str = r#"
# jest / vitest / mocha / playwright / node --test
--coverage
--no-coverage
--collectCoverage
--coverageProvider =
--ci
--no-ci
--run
--watch =?
--watchAll =?
--no-watch
--no-watchman
--runInBand
-i
--silent
--verbose
--quiet
--colors
--color
--no-color
--no-colors
--bail =?
-t --testNamePattern =
--testPathPattern --testPathPatterns =
--testPathIgnorePatterns =
--passWithNoTests
--pass-with-no-tests
--detectOpenHandles
--forceExit
--exit
--logHeapUsage
--maxWorkers =
--maxConcurrency =
--testTimeout =
--hookTimeout =
--shard =
--grep -g =
--grep-invert =
--invert
--fgrep =
--retries --retry =
--repeat-each =
--workers =
--project --selectProjects =
--listTests
--list
--json
--noStackTrace
--no-cache
--clearCache
--clearMocks
--resetMocks
--restoreMocks
--onlyChanged
--onlyFailures
--lastCommit
--last-failed
--changedSince =
--findRelatedTests
--randomize
--seed =
--errorOnDeprecated
--forbid-only
--forbid-pending
--allowOnly
--fully-parallel
--headed
--recursive
--sort
--check-leaks
--full-trace
--dry-run
--fail-zero
--globals
--typecheck
--no-file-parallelism
--no-isolate
--test-only
--test-name-pattern =
--test-concurrency =
--test-timeout =
--test-shard =
--minify
--sourcemap =?
--mode =
-u --updateSnapshot --update --update-snapshots changes: rewrites snapshot files
--fix changes: the script may rewrite files

# modules loaded by the runner
-c --config = program: a JavaScript config file is code
--reporter -R --reporters --test-reporter = program: a path loads a reporter module

# outputs
--outputFile = write
--coverageDirectory = write
--cacheDirectory = write
--test-reporter-destination = write
--outDir --out-dir = write
-o --output --outfile --out-file = write
--dist-dir = write
"#;

/// `tsc`.
pub const TSC: &str = r#"
# commands
--all
-h --help -?
-v --version
--init changes: writes tsconfig.json
--listFilesOnly
--locale =
-p --project = read
--showConfig
--ignoreConfig
-b --build
-w --watch

# build mode
--verbose
-d --declaration
--dry
-f --force
--clean changes: deletes build outputs
--stopBuildOnErrors

# watch options
--watchFile =
--watchDirectory =
--fallbackPolling =
--synchronousWatchDirectory
--excludeDirectories =
--excludeFiles =
--preserveWatchOutput

# output and diagnostics
--outDir = write
--outFile = write
--out = write
--declarationDir = write
--tsBuildInfoFile = write
--generateTrace = write
--generateCpuProfile = write
--rootDir = read
--baseUrl = read
--typeRoots = read
--diagnostics
--extendedDiagnostics
--explainFiles
--listFiles
--listEmittedFiles
--traceResolution
--pretty
--noErrorTruncation

# compiler options
--allowArbitraryExtensions
--allowImportingTsExtensions
--allowJs
--allowSyntheticDefaultImports
--allowUmdGlobalAccess
--allowUnreachableCode
--allowUnusedLabels
--alwaysStrict
--assumeChangesOnlyAffectDirectDependencies
--charset =
--checkJs
--composite
--customConditions =
--declarationMap
--disableReferencedProjectLoad
--disableSizeLimit
--disableSolutionSearching
--disableSourceOfProjectReferenceRedirect
--downlevelIteration
--emitBOM
--emitDeclarationOnly
--emitDecoratorMetadata
--erasableSyntaxOnly
--esModuleInterop
--exactOptionalPropertyTypes
--experimentalDecorators
--forceConsistentCasingInFileNames
--ignoreDeprecations =
--importHelpers
--importsNotUsedAsValues =
-i --incremental
--inlineSourceMap
--inlineSources
--isolatedDeclarations
--isolatedModules
--jsx =
--jsxFactory =
--jsxFragmentFactory =
--jsxImportSource =
--keyofStringsOnly
--lib =
--libReplacement
--mapRoot =
--maxNodeModuleJsDepth =
-m --module =
--moduleDetection =
--moduleResolution =
--moduleSuffixes =
--newLine =
--noCheck
--noEmit
--noEmitHelpers
--noEmitOnError
--noFallthroughCasesInSwitch
--noImplicitAny
--noImplicitOverride
--noImplicitReturns
--noImplicitThis
--noImplicitUseStrict
--noLib
--noPropertyAccessFromIndexSignature
--noResolve
--noStrictGenericChecks
--noUncheckedIndexedAccess
--noUncheckedSideEffectImports
--noUnusedLocals
--noUnusedParameters
--preserveConstEnums
--preserveSymlinks
--preserveValueImports
--reactNamespace =
--removeComments
--resolveJsonModule
--resolvePackageJsonExports
--resolvePackageJsonImports
--rewriteRelativeImportExtensions
--skipDefaultLibCheck
--skipLibCheck
--sourceMap
--sourceRoot =
--stableTypeOrdering
--strict
--strictBindCallApply
--strictBuiltinIteratorReturn
--strictFunctionTypes
--strictNullChecks
--strictPropertyInitialization
--stripInternal
--suppressExcessPropertyErrors
--suppressImplicitAnyIndexErrors
-t --target =
--types =
--useDefineForClassFields
--useUnknownInCatchVariables
--verbatimModuleSyntax
"#;

/// `eslint`.
pub const ESLINT: &str = r#"
# basic configuration
--no-config-lookup
--no-eslintrc
-c --config = program: a config file is JavaScript
--inspect-config spawns: runs the config inspector (npx) and serves it
--env =
--ext =
--global =
--parser = program
--parser-options =
--resolve-plugins-relative-to = program

# rules and plug-ins
--rulesdir = program
--plugin = program
--rule =

# fixing
--fix changes: rewrites the linted files
--fix-dry-run
--fix-type =

# ignoring
--ignore-path = read
--no-ignore
--ignore-pattern =

# stdin
--stdin
--stdin-filename =

# warnings
--quiet
--max-warnings =

# output
-o --output-file = write
-f --format = program: a path loads a formatter module
--color
--no-color

# inline configuration comments
--no-inline-config
--report-unused-disable-directives
--report-unused-disable-directives-severity =
--report-unused-inline-configs =

# caching
--cache
--cache-file = write
--cache-location = write
--cache-strategy =

# suppressions
--suppress-all changes: writes the suppressions file
--suppress-rule = changes: writes the suppressions file
--suppressions-location = write
--prune-suppressions changes: rewrites the suppressions file
--pass-on-unpruned-suppressions

# miscellaneous
--init spawns: runs npm init @eslint/config
--env-info
--no-error-on-unmatched-pattern
--exit-on-fatal-error
--no-warn-ignored
--pass-on-no-patterns
--debug
-h --help
-v --version
--print-config =
--stats
--flag =
--concurrency =
--mcp spawns: starts an MCP server
"#;

// ---------------------------------------------------------------------------
// Python
// ---------------------------------------------------------------------------

/// `pytest` (core options plus pytest-cov, pytest-xdist, pytest-timeout,
/// pytest-rerunfailures, pytest-randomly and pytest-asyncio).
pub const PYTEST: &str = r#"
# general
-k =
-m =
--markers
-x --exitfirst
--maxfail =
--strict-config
--strict-markers
--strict
--fixtures --funcargs
--fixtures-per-test
--pdb changes: opens an interactive debugger
--trace changes: opens an interactive debugger
--pdbcls = program
--capture =
-s
--runxfail
--lf --last-failed
--ff --failed-first
--nf --new-first
--cache-show =?
--cache-clear
--lfnf --last-failed-no-failures =
--sw --stepwise
--sw-skip --stepwise-skip
--sw-reset --stepwise-reset
-c --config-file = config: an ini file's addopts can add any option
--rootdir = read
--basetemp = delete: empties that directory first
-p = program: loads a plug-in
--disable-plugin-autoload
-V --version
-h --help
--trace-config
--debug =? write
-o --override-ini = config
--assert =
--setup-only
--setup-show
--setup-plan
--runpytest =

# reporting
--durations =
--durations-min =
-v --verbose
-vv
-vvv
-q --quiet
-qq
--verbosity =
--no-header
--no-summary
--no-fold-skipped
--force-short-summary
-r =
--disable-warnings --disable-pytest-warnings
-l --showlocals
--no-showlocals
--tb =
--xfail-tb
--show-capture =
--full-trace
--color =
--code-highlight =
--pastebin = changes: uploads the test output to a pastebin
--junitxml --junit-xml = write
--junitprefix --junit-prefix =
-W --pythonwarnings =

# collection
--co --collect-only
--pyargs
--ignore =
--ignore-glob =
--deselect =
--confcutdir = read
--noconftest
--keep-duplicates
--collect-in-virtualenv
--continue-on-collection-errors
--import-mode =
--doctest-modules
--doctest-report =
--doctest-glob =
--doctest-ignore-import-errors
--doctest-continue-on-failure

# logging
--log-level =
--log-format =
--log-date-format =
--log-cli-level =
--log-cli-format =
--log-cli-date-format =
--log-file = write
--log-file-mode =
--log-file-level =
--log-file-format =
--log-file-date-format =
--log-auto-indent =
--log-disable =

# pytest-cov
--cov =?
--cov-report = config: may write a report anywhere
--cov-config = config: a coverage config can load plug-ins and set the data file
--cov-fail-under =
--cov-precision =
--no-cov
--no-cov-on-fail
--cov-append
--cov-branch
--cov-context =
--cov-reset

# pytest-xdist
-n --numprocesses =
--maxprocesses =
--max-worker-restart =
--dist =
-d --distload
--loadgroup
-f --looponfail
--tx = program: a gateway spec names the interpreter or host to run
--rsyncdir = read
--rsyncignore =

# pytest-timeout
--timeout =
--timeout-method --timeout_method =
--timeout-disable-debugger-detection

# pytest-rerunfailures
--reruns =
--reruns-delay =
--only-rerun =
--rerun-except =
--fail-on-flaky

# pytest-randomly
--randomly-seed =
--randomly-dont-reset-seed
--randomly-dont-reorganize

# pytest-asyncio
--asyncio-mode =
--asyncio-debug
"#;

/// `ruff check`.
pub const RUFF_CHECK: &str = r#"
--fix changes: rewrites files
--no-fix
--unsafe-fixes changes: rewrites files
--no-unsafe-fixes
--fix-only changes: rewrites files
--no-fix-only
--add-noqa =? changes: rewrites files
--show-fixes
--no-show-fixes
--diff
-w --watch
--ignore-noqa
--output-format =
-o --output-file = write
--target-version =
--preview
--no-preview
--extension =
--statistics
--show-files
--show-settings
--config = config: a file or an inline setting
--isolated
--select =
--ignore =
--extend-select =
--extend-ignore =
--per-file-ignores =
--extend-per-file-ignores =
--fixable =
--unfixable =
--extend-fixable =
--extend-unfixable =
--exclude =
--extend-exclude =
--respect-gitignore
--no-respect-gitignore
--force-exclude
--no-force-exclude
-n --no-cache
--cache-dir = write
--stdin-filename =
-e --exit-non-zero-on-fix
--exit-zero
--line-length =
--dummy-variable-rgx =
-v --verbose
-q --quiet
-s --silent
-h --help
"#;

/// `mypy`.
pub const MYPY: &str = r#"
# boolean families (every member is a harmless flag)
--warn-*
--no-*
--disallow-*
--allow-*
--strict*
--show-*
--hide-*

# general
-h --help
-v --verbose
-V --version
--config-file = program: may load plug-ins
-m --module =
-p --package =
-c --command =
--exclude =
--exclude-gitignore
--explicit-package-bases
--namespace-packages
--ignore-missing-imports
--follow-untyped-imports
--follow-imports =
--python-executable = program
--custom-typeshed-dir = read
--python-version =
--platform =
--always-true =
--always-false =
--package-root =
--scripts-are-modules

# checks
--check-untyped-defs
--implicit-optional
--implicit-reexport
--extra-checks
--local-partial-types
--enable-error-code =
--disable-error-code =
--enable-incomplete-feature =
--custom-typing-module =
--untyped-calls-exclude =
--deprecated-calls-exclude =
--report-deprecated-as-note
--disable-bytearray-promotion
--disable-memoryview-promotion
--force-uppercase-builtins
--force-union-syntax
--new-type-inference
--old-type-inference

# output
--pretty
--color-output
--error-summary
--soft-error-limit =
--tb
--raise-exceptions
--pdb changes: opens an interactive debugger

# incremental
--incremental
--cache-dir = write
--sqlite-cache
--fixed-format-cache
--cache-fine-grained
--skip-version-check
--skip-cache-mtime-checks
--fast-module-lookup
--bazel

# reports
--any-exprs-report = write
--cobertura-xml-report = write
--html-report = write
--linecount-report = write
--linecoverage-report = write
--lineprecision-report = write
--memory-xml-report = write
--txt-report = write
--xml-report = write
--xslt-html-report = write
--xslt-txt-report = write
--junit-xml = write
--junit-format =
--timing-stats = write
--line-checking-stats = write
--dump-type-stats
--dump-inference-stats
--find-occurrences =

# miscellaneous
--shadow-file =2 read@1,2: type-checks the first file from the second file's text
--install-types spawns: runs pip install
--non-interactive
"#;

// ---------------------------------------------------------------------------
// Go (one dash; the parser also accepts two)
// ---------------------------------------------------------------------------

/// Build flags shared by `go build`, `go test` and `go vet`.
macro_rules! go_build_flags {
    () => {
        r#"
-C = write: builds in another directory
-a =?
-n =?
-p =
-race =?
-msan =?
-asan =?
-cover =?
-covermode =
-coverpkg =
-v =?
-work =?
-x =?
-json =?
-asmflags =
-buildmode =
-buildvcs =?
-compiler =
-gccgoflags = config: gccgo flags can name programs to run
-gcflags =
-installsuffix =
-ldflags =
-linkshared =?
-mod =
-modcacherw =?
-modfile = read
-overlay = read
-pgo = read
-pkgdir = write
-tags =
-trimpath =?
-toolexec = program
"#
    };
}

/// `go build`.
pub const GO_BUILD: &str = concat!(
    go_build_flags!(),
    r#"
-o = write
"#
);

/// `go test`.
pub const GO_TEST: &str = concat!(
    go_build_flags!(),
    r#"
-args spawns: passes the rest to the test binary
-c =?
-exec = program
-o = write
-failfast =?
-fullpath =?
-list =
-vet =
-bench =
-benchmem =?
-benchtime =
-count =
-coverprofile = write
-cpu =
-cpuprofile = write
-memprofile = write
-memprofilerate =
-blockprofile = write
-blockprofilerate =
-mutexprofile = write
-mutexprofilefraction =
-trace = write
-outputdir = write
-artifacts =?
-parallel =
-run =
-short =?
-shuffle =
-skip =
-timeout =
-fuzz =
-fuzztime =
-fuzzminimizetime =
"#
);

/// `go vet`.
pub const GO_VET: &str = concat!(
    go_build_flags!(),
    r#"
-vettool = program
-c =
-fix =? changes: applies suggested fixes to source files

# analyzers
-appends =?
-asmdecl =?
-assign =?
-atomic =?
-bools =?
-buildtag =?
-cgocall =?
-composites =?
-copylocks =?
-defers =?
-directive =?
-errorsas =?
-framepointer =?
-hostport =?
-httpresponse =?
-ifaceassert =?
-loopclosure =?
-lostcancel =?
-nilfunc =?
-printf =?
-printf.funcs =
-shift =?
-sigchanyzer =?
-slog =?
-stdmethods =?
-stdversion =?
-stringintconv =?
-structtag =?
-testinggoroutine =?
-tests =?
-timeformat =?
-unmarshal =?
-unreachable =?
-unsafeptr =?
-unusedresult =?
-unusedresult.funcs =
-unusedresult.stringmethods =
-waitgroup =?
"#
);

// ---------------------------------------------------------------------------
// make, Maven, Gradle
// ---------------------------------------------------------------------------

/// `make` (GNU make).
pub const MAKE: &str = r#"
-b
-m
-B --always-make
-C --directory = write: runs the build in that directory
-d
--debug =?
-e --environment-overrides
-E --eval = script: evaluates makefile text
-f --file --makefile = program: runs another makefile
-h --help
-i --ignore-errors
-I --include-dir = read-tree: reads included makefiles from that directory
-j --jobs =?
-k --keep-going
-l --load-average --max-load =?
-L --check-symlink-times
-n --just-print --dry-run --recon
-o --old-file --assume-old =
-O --output-sync =?
-p --print-data-base
-q --question
-r --no-builtin-rules
-R --no-builtin-variables
-s --silent --quiet
--no-silent
-S --no-keep-going --stop
-t --touch changes: touches targets
--trace
-v --version
-w --print-directory
--no-print-directory
-W --what-if --new-file --assume-new =
--warn-undefined-variables
--jobserver-style =
--shuffle =?
"#;

/// `mvn` / `mvnw`.
pub const MVN: &str = r#"
-D --define =
-P --activate-profiles =
-pl --projects =
-am --also-make
-amd --also-make-dependents
-rf --resume-from =
-r --resume
-f --file = program: another POM runs other plug-ins
-s --settings = config
-gs --global-settings = config
-t --toolchains = config
-gt --global-toolchains = config
-o --offline
-q --quiet
-X --debug
-e --errors
-B --batch-mode --non-interactive
-ntp --no-transfer-progress
-T --threads =
-b --builder =
-U --update-snapshots
-nsu --no-snapshot-updates
-C --strict-checksums
-c --lax-checksums
-fae --fail-at-end
-ff --fail-fast
-fn --fail-never
-l --log-file = write
-N --non-recursive
-V --show-version
-v --version
-h --help
--color =
-llr --legacy-local-repository
-itr --ignore-transitive-repositories
-npr --no-plugin-registry
-npu --no-plugin-updates
-cpu --check-plugin-updates
-up --update-plugins
-emp --encrypt-master-password =?
-ep --encrypt-password =?
"#;

/// `gradle` / `gradlew`.
pub const GRADLE: &str = r#"
-D --system-prop =
-P --project-prop =
-I --init-script = program
-b --build-file = program
-c --settings-file = program
--include-build = program
-p --project-dir = write
--project-cache-dir = write
-g --gradle-user-home = write
-x --exclude-task =
--tests =
--rerun
--fail-fast
--scan changes: publishes a build scan
--no-scan
--offline
-i --info
-d --debug
-q --quiet
-w --warn
-s --stacktrace
-S --full-stacktrace
--continue
--no-continue
--parallel
--no-parallel
--daemon
--no-daemon
--foreground spawns: runs a Gradle daemon
--build-cache
--no-build-cache
--configuration-cache
--no-configuration-cache
--configuration-cache-problems =
--configure-on-demand
--no-configure-on-demand
--watch-fs
--no-watch-fs
--rerun-tasks
-U --refresh-dependencies
--refresh-keys
--console =
--warning-mode =
-m --dry-run
-a --no-rebuild
--max-workers =
--priority =
--profile
--problems-report
--no-problems-report
--task-graph
--status
--stop changes: stops the running Gradle daemons
-t --continuous
-F --dependency-verification =
--write-locks changes: rewrites dependency lock files
--update-locks = changes: rewrites dependency lock files
-M --write-verification-metadata = changes: writes gradle/verification-metadata.xml
--export-keys changes: writes the verification keyring
-v --version
-h --help -?
"#;
