//! Option tables of git's read-only subcommands, the GitHub CLI's views,
//! docker's and kubectl's read-only views.
//!
//! One option a line: `NAMES [VALUE] [EFFECT[: why]]`; blank lines and
//! lines starting with `#` are ignored. An option absent from a table sends
//! the command to review, so options whose effect cannot be told from the
//! option alone are left out on purpose (see the `#` notes).

// The diff options shared by `git diff`, `git log` and `git show`
// (git-scm.com/docs/diff-options).
macro_rules! diff_options {
    () => {
        r#"
# Output format
-p -u --patch
-s --no-patch
-U --unified =
-W --function-context
--no-function-context
--output = write: writes the diff to a file
--output-indicator-new =
--output-indicator-old =
--output-indicator-context =
--raw
--patch-with-raw
--patch-with-stat
--indent-heuristic
--no-indent-heuristic
--minimal
--patience
--histogram
--anchored =
--diff-algorithm =
--stat =?
--stat-width =
--stat-name-width =
--stat-graph-width =
--stat-count =
--compact-summary
--numstat
--shortstat
-X --dirstat =?
--cumulative
--dirstat-by-file =?
--summary
-z
--name-only
--name-status
--submodule =?
--color =?
--no-color
--color-moved =?
--no-color-moved
--color-moved-ws =
--no-color-moved-ws
--word-diff =?
--word-diff-regex =
--color-words =?
--no-renames
--renames
--rename-empty
--no-rename-empty
--check
--ws-error-highlight =
--full-index
--binary
--abbrev =?
--no-abbrev
-B --break-rewrites =?
-M --find-renames =?
-C --find-copies =?
--find-copies-harder
-D --irreversible-delete
-l =
--diff-filter =
-S =
-G =
--find-object =
--pickaxe-all
--pickaxe-regex
-O = read: reads the order file
--skip-to =
--rotate-to =
-R
--relative =?
--no-relative
-a --text
--ignore-cr-at-eol
--ignore-space-at-eol
-b --ignore-space-change
-w --ignore-all-space
--ignore-blank-lines
-I --ignore-matching-lines =
--inter-hunk-context =
--exit-code
--quiet
--ext-diff spawns: runs the external diff program
--no-ext-diff
--textconv spawns: runs the configured text conversion filters
--no-textconv
--ignore-submodules =?
--src-prefix =
--dst-prefix =
--no-prefix
--default-prefix
--line-prefix =
--ita-invisible-in-index
--ita-visible-in-index
--max-depth =
-h
--help spawns: opens the manual page
"#
    };
}

// The revision, pretty-format and log options shared by `git log` and
// `git show` (git-scm.com/docs/git-log, rev-list-options, pretty-options).
macro_rules! log_options {
    () => {
        r#"
# Diff of merge commits
-m
-c
--cc
--dd
--remerge-diff
--no-diff-merges
--diff-merges =
--combined-all-paths
-t

# Log options
--follow
--no-follow
--decorate =?
--no-decorate
--decorate-refs =
--decorate-refs-exclude =
--clear-decorations
--source
--mailmap
--no-mailmap
--use-mailmap
--no-use-mailmap
--full-diff
--log-size
-L =

# Commit limiting
-NUM
-n --max-count =
--skip =
--since --after =
--since-as-filter =
--until --before =
--max-age =
--min-age =
--author =
--committer =
--grep-reflog =
--grep =
--all-match
--invert-grep
-i --regexp-ignore-case
--basic-regexp
-E --extended-regexp
-F --fixed-strings
-P --perl-regexp
--remove-empty
--merges
--no-merges
--min-parents =
--max-parents =
--no-min-parents
--no-max-parents
--first-parent
--exclude-first-parent-only
--not
--all
--branches =?
--tags =?
--remotes =?
--glob =
--exclude =
--exclude-hidden =
--reflog
--alternate-refs spawns: may run core.alternateRefsCommand
--single-worktree
--ignore-missing
--bisect
--stdin
--cherry-mark
--cherry-pick
--left-only
--right-only
--cherry
-g --walk-reflogs
--merge
--boundary

# History simplification
--simplify-by-decoration
--show-pulls
--full-history
--dense
--sparse
--simplify-merges
--ancestry-path =?

# Ordering and walking
--date-order
--author-date-order
--topo-order
--reverse
--no-walk =?
--do-walk

# Commit formatting
# %G placeholders in --pretty/--format also make git run gpg.
--pretty =?
--format =
--abbrev-commit
--no-abbrev-commit
--oneline
--encoding =
--expand-tabs =?
--no-expand-tabs
--notes =?
--no-notes
--show-notes-by-default
--show-notes =?
--standard-notes
--no-standard-notes
--show-signature spawns: runs gpg to verify signatures
--relative-date
--date =
--parents
--children
--left-right
--graph
--no-graph
--show-linear-break =?
"#
    };
}

/// `git`'s global options, before the subcommand.
pub const GIT: &str = r#"
-v --version
-h --help spawns: may open the manual page or a browser
-C = read: runs in that directory
-c = config: sets a configuration variable
--config-env = config: sets a configuration variable from the environment
--exec-path =? program: runs git commands from that directory
--html-path
--man-path
--info-path
-p --paginate spawns: runs the pager
-P --no-pager
--git-dir = config: moves the repository
--work-tree = config: moves the working tree
--namespace = config: moves the ref namespace
--bare config: treats the directory as the repository
--no-replace-objects
--no-lazy-fetch
--literal-pathspecs
--glob-pathspecs
--noglob-pathspecs
--icase-pathspecs
--no-optional-locks
--no-advice
--super-prefix =
--list-cmds =
--attr-source = config: reads attributes, which name filters and diff drivers, from a tree
"#;

/// `git status`.
pub const GIT_STATUS: &str = r#"
-s --short
-b --branch
--no-branch
--show-stash
--no-show-stash
--porcelain =?
--long
-v --verbose
-u --untracked-files =?
--ignore-submodules =?
--ignored =?
-z
--null
--column =?
--no-column
--ahead-behind
--no-ahead-behind
--renames
--no-renames
-M --find-renames =?
-h
--help spawns: opens the manual page
"#;

/// `git diff`.
pub const GIT_DIFF: &str = concat!(
    diff_options!(),
    r#"
# git diff's own
--cached --staged
--merge-base
# Without --no-index, git diff already compares paths outside the working
# tree; the operands are paths either way.
--no-index
-1 --base
-2 --ours
-3 --theirs
-0
-c
--cc
--combined-all-paths
"#
);

/// `git log`.
pub const GIT_LOG: &str = concat!(diff_options!(), log_options!());

/// `git show`: takes the options of `git log` and `git diff`.
pub const GIT_SHOW: &str = concat!(diff_options!(), log_options!());

/// `git branch`, listing and modifying options.
pub const GIT_BRANCH: &str = r#"
# Listing
--color =?
--no-color
-i --ignore-case
--omit-empty
--column =?
--no-column
--sort =
-r --remotes
-a --all
-l --list
--show-current
-v -vv --verbose
-q --quiet
--abbrev =
--no-abbrev
# --contains, --no-contains, --merged and --no-merged take a commit when one
# follows, and default to HEAD when last.
--contains =
--no-contains =
--merged =
--no-merged =
--forked =
--points-at =
--format =
--dry-run
-h
--help spawns: opens the manual page

# Modifying
-d --delete changes: deletes branches
-D changes: deletes branches, merged or not
--create-reflog changes: creates a reflog
--no-create-reflog
-f --force changes: resets or overwrites branches
-m --move changes: renames a branch
-M changes: renames a branch over an existing one
-c --copy changes: copies a branch
-C changes: copies a branch over an existing one
--delete-merged = changes: deletes merged branches
-t --track =? changes: sets upstream configuration
--no-track changes: creates a branch without upstream
--recurse-submodules changes: creates branches in submodules
--set-upstream changes: sets upstream configuration
-u --set-upstream-to = changes: sets the upstream
--unset-upstream changes: removes the upstream
--edit-description changes: opens an editor on the branch description
"#;

/// `git rev-parse`.
pub const GIT_REV_PARSE: &str = r#"
--parseopt
--sq-quote
--keep-dashdash
--stop-at-non-option
--stuck-long
--revs-only
--no-revs
--flags
--no-flags
--default =
--prefix =
--verify
-q --quiet
--sq
--short =?
--not
--abbrev-ref =?
--symbolic
--symbolic-full-name
--output-object-format =
--all
--branches =?
--tags =?
--remotes =?
--glob =
--exclude =
--exclude-hidden =
--disambiguate =
# Prints the names of repository-local GIT_* variables, not their values.
--local-env-vars
--path-format =
--git-dir
--git-common-dir
--resolve-git-dir = read: checks a path for a repository
--git-path =
--show-toplevel
--show-superproject-working-tree
--shared-index-path
--absolute-git-dir
--is-inside-git-dir
--is-inside-work-tree
--is-bare-repository
--is-shallow-repository
--show-cdup
--show-prefix
--show-object-format =?
--show-ref-format
--since --after =
--until --before =
--bisect
--end-of-options
-h
--help spawns: opens the manual page
"#;

/// `git ls-files`.
pub const GIT_LS_FILES: &str = r#"
-c --cached
-d --deleted
-m --modified
-o --others
-i --ignored
-s --stage
--directory
--no-empty-directory
-u --unmerged
-k --killed
--resolve-undo
-z
--deduplicate
-x --exclude =
-X --exclude-from = read
--exclude-per-directory = read: reads files of that name in every directory
--exclude-standard
--error-unmatch
--with-tree =
-t
-v
-f
--full-name
--recurse-submodules
--abbrev =?
--debug
--eol
--sparse
--format =
-h
--help spawns: opens the manual page
"#;

/// `git blame`.
pub const GIT_BLAME: &str = r#"
-b
--root
--show-stats
-L =
-l
-t
-S = read: reads the revisions file
--reverse
--first-parent
-p --porcelain
--line-porcelain
--incremental
--encoding =
--contents = read: annotates the named file's contents
--date =
--progress
--no-progress
-M =?
-C =?
--ignore-rev =
--ignore-revs-file = read
--color-lines
--color-by-age
-c
--score-debug
-f --show-name
-n --show-number
-s
-e --show-email
-w
--minimal
--abbrev =?
--textconv spawns: runs the configured text conversion filters
--no-textconv
--since --after =
--until --before =
-h
--help spawns: opens the manual page
"#;

/// `git remote`'s own options, before its sub-subcommand.
pub const GIT_REMOTE: &str = r#"
-v --verbose
-h
--help spawns: opens the manual page
"#;

/// `git stash list`: takes the options of `git log`.
pub const GIT_STASH_LIST: &str = GIT_LOG;

/// `gh pr view`.
pub const GH_PR_VIEW: &str = r#"
-c --comments
-q --jq =
--json =
-t --template =
-w --web spawns: opens a browser
-R --repo =
-h --help
"#;

/// `gh pr list`.
pub const GH_PR_LIST: &str = r#"
--app =
-a --assignee =
-A --author =
-B --base =
-d --draft
-H --head =
-q --jq =
--json =
-l --label =
-L --limit =
-S --search =
-s --state =
-t --template =
-w --web spawns: opens a browser
-R --repo =
-h --help
"#;

/// `gh pr diff`.
pub const GH_PR_DIFF: &str = r#"
--color =
-e --exclude =
--name-only
--patch
-w --web spawns: opens a browser
-R --repo =
-h --help
"#;

/// `gh pr checks`.
pub const GH_PR_CHECKS: &str = r#"
--fail-fast
-i --interval =
-q --jq =
--json =
--required
-t --template =
--watch
-w --web spawns: opens a browser
-R --repo =
-h --help
"#;

/// `gh issue view`.
pub const GH_ISSUE_VIEW: &str = r#"
-c --comments
-q --jq =
--json =
-t --template =
-w --web spawns: opens a browser
-R --repo =
-h --help
"#;

/// `gh issue list`.
pub const GH_ISSUE_LIST: &str = r#"
--app =
-a --assignee =
-A --author =
-q --jq =
--json =
-l --label =
-L --limit =
--mention =
-m --milestone =
-S --search =
-s --state =
-t --template =
-w --web spawns: opens a browser
-R --repo =
-h --help
"#;

/// `gh run view`.
pub const GH_RUN_VIEW: &str = r#"
-a --attempt =
--exit-status
-j --job =
-q --jq =
--json =
--log
--log-failed
-t --template =
-v --verbose
-w --web spawns: opens a browser
-R --repo =
-h --help
"#;

/// `gh run list`.
pub const GH_RUN_LIST: &str = r#"
-a --all
-b --branch =
-c --commit =
--created =
-e --event =
-q --jq =
--json =
-L --limit =
-s --status =
-t --template =
-u --user =
-w --workflow =
-R --repo =
-h --help
"#;

/// `docker`'s global options, before the subcommand.
pub const DOCKER: &str = r#"
--config = config: config directory, which holds CLI plugins and credential helpers
-c --context = config: selects the daemon
-D --debug
-H --host = config: selects the daemon
-l --log-level =
--tls config: changes the daemon connection
--tlscacert = read
--tlscert = read
--tlskey = read
--tlsverify config: changes the daemon connection
-v --version
-h --help
"#;

/// `docker ps` (`docker container ls`).
pub const DOCKER_PS: &str = r#"
-a --all
-f --filter =
--format =
-n --last =
-l --latest
--no-trunc
-q --quiet
-s --size
-h --help
"#;

/// `docker logs` (`docker container logs`).
pub const DOCKER_LOGS: &str = r#"
--details
-f --follow
--since =
-n --tail =
-t --timestamps
--until =
-h --help
"#;

/// `docker compose`'s global options, before its subcommand.
pub const DOCKER_COMPOSE: &str = r#"
-f --file = read
-p --project-name =
--project-directory = read: reads the project's files from that directory
--workdir = read: deprecated spelling of --project-directory
--profile =
--env-file = read
--parallel =
--ansi =
--no-ansi
--progress =
--dry-run
--all-resources
--compatibility
--verbose
-v --version
-h --help
"#;

/// `docker compose ps`.
pub const DOCKER_COMPOSE_PS: &str = r#"
-a --all
--filter =
--format =
--no-trunc
--orphans
-q --quiet
--services
--status =
-h --help
"#;

/// `docker compose logs`.
pub const DOCKER_COMPOSE_LOGS: &str = r#"
-f --follow
--index =
--no-color
--no-log-prefix
--since =
-n --tail =
-t --timestamps
--until =
-h --help
"#;

// kubectl's global flags, which every subcommand accepts.
macro_rules! kubectl_global_flags {
    () => {
        r#"
# kubectl's global flags
# A kubeconfig can name exec credential plugins that kubectl runs, so
# choosing one is more than reading a file.
--kubeconfig = config: a kubeconfig can name credential plugins that kubectl runs
--kuberc = config: preferences file that sets default flags
--context = config: selects the cluster and identity
--cluster = config: selects the cluster
--user = config: selects the identity
-n --namespace =
-s --server = config: selects the API server
--token = config: sets the identity
--as = config: impersonates a user
--as-group = config: impersonates a group
--as-uid = config: impersonates a UID
--as-user-extra = config: impersonates user extras
--username = config: sets the identity
--password = config: sets the identity
--insecure-skip-tls-verify config: turns off TLS verification
--certificate-authority = read
--client-certificate = read
--client-key = read
--tls-server-name = config: changes the name the server certificate is checked against
--request-timeout =
--cache-dir = write
--disable-compression
--match-server-version
--warnings-as-errors
--profile =
--profile-output = write
-v --v =
--vmodule =
--log-flush-frequency =
--add-dir-header
--alsologtostderr
--log-backtrace-at =
--log-dir = write
--log-file = write
--log-file-max-size =
--logtostderr
--one-output
--skip-headers
--skip-log-headers
--stderrthreshold =
-h --help
"#
    };
}

/// `kubectl describe`, with kubectl's global flags.
pub const KUBECTL_DESCRIBE: &str = concat!(
    kubectl_global_flags!(),
    r#"
# kubectl describe's own
-A --all-namespaces
--chunk-size =
-f --filename = read
-k --kustomize = read: reads a kustomization directory
-R --recursive
-l --selector =
--show-events
"#
);

/// `kubectl logs`, with kubectl's global flags.
pub const KUBECTL_LOGS: &str = concat!(
    kubectl_global_flags!(),
    r#"
# kubectl logs' own
--all-containers
--all-pods
-c --container =
-f --follow
--ignore-errors
--insecure-skip-tls-verify-backend config: turns off TLS verification of the kubelet
--limit-bytes =
--max-log-requests =
--pod-running-timeout =
--prefix
-p --previous
-l --selector =
--since =
--since-time =
--tail =
--timestamps
"#
);
