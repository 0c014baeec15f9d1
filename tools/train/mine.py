#!/usr/bin/env python3
"""Mine file-localization training examples from the git history of many repositories.

Each example: a repository at the parent commit (base_commit) + a natural-language query taken
from the commit message / PR description -> gold = the non-test source files that the change
MODIFIED (files that already exist at base_commit), with the changed line ranges in the base.

Generalises shared/eval/scripts/make_git_history_eval.py (one repo, rust/python) to every
language Loupe indexes, to PR-merge commits (GitHub, GitLab, bors, homu) and to many repos in
parallel.  Only git plumbing is used, so it runs on bare mirrors.  Python 3.11 stdlib only.

Per repository the work is three git processes, whatever the history length:
  1. one `git log --first-parent --raw` stream (trees only): messages + per-file status and
     blob ids of every first-parent commit -> message / file-count filtering in Python;
  2. one `git cat-file --batch-check` over the source blobs of the candidates (snapshots lack
     blobs of 4 MiB and more; commits needing one are skipped, not fatal);
  3. one `git diff-tree --stdin -p -U0` (source extensions only) fed the candidate
     (commit, first parent) pairs -> line counts (= numstat) and hunks of every gold file.

usage:
  mine.py --mirrors /work/.mirror --repos tools/train/repos.tsv --out DIR [--jobs 2] [--max N]
      writes DIR/owner+name.jsonl per repository and DIR/stats.json
  mine.py --mirrors /work/.mirror --write-forbidden-roots [tools/train/forbidden_roots.txt]
      (re)records the root commits of the forbidden repositories whose mirrors are present
  mine.py --mirrors /work/.mirror --make-repos-tsv LIST --repos tools/train/repos.tsv
      LIST lines: "owner/name<TAB>lang"; writes repos.tsv (repo lang split head licence)
"""
import argparse
import collections
import hashlib
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_FORBIDDEN_ROOTS = os.path.join(HERE, 'forbidden_roots.txt')

# ---------------------------------------------------------------------------------------------
# Repositories that must never be mined (evaluation sources).  Enforced here, not only in the
# repository list: by name, and by root commit (forks / copies share the root commit).
FORBIDDEN = (
    'tokio-rs/tokio', 'tokio-rs/axum', 'tokio-rs/tracing', 'tokio-rs/bytes',
    'BurntSushi/ripgrep', 'sharkdp/bat', 'sharkdp/fd', 'pallets/flask', 'psf/requests',
    'django/django', 'sympy/sympy', 'scikit-learn/scikit-learn', 'matplotlib/matplotlib',
    'pytest-dev/pytest', 'sphinx-doc/sphinx', 'astropy/astropy', 'pydata/xarray',
    'pylint-dev/pylint', 'mwaskom/seaborn', 'clap-rs/clap', 'nushell/nushell',
    # Reserved for evaluation by the re-ranking issue (JavaScript, Go, Java held-out sets).
    'iamkun/dayjs', 'anuraghazra/github-readme-stats', 'zeromicro/go-zero',
    'FasterXML/jackson-core', 'axios/axios', 'expressjs/express', 'grpc/grpc-go',
)
FORBIDDEN_LC = {r.lower() for r in FORBIDDEN}

# ---------------------------------------------------------------------------------------------
# Languages by extension.  '.h' is resolved to c or cpp per example (see example_lang).
EXT_LANG = {
    '.rs': 'rust', '.py': 'python',
    '.ts': 'typescript', '.tsx': 'typescript', '.mts': 'typescript', '.cts': 'typescript',
    '.js': 'javascript', '.jsx': 'javascript', '.mjs': 'javascript', '.cjs': 'javascript',
    '.go': 'go', '.java': 'java', '.c': 'c', '.h': 'c_or_cpp',
    '.cc': 'cpp', '.cpp': 'cpp', '.cxx': 'cpp', '.hpp': 'cpp', '.hh': 'cpp', '.hxx': 'cpp',
    '.cs': 'csharp', '.rb': 'ruby',
}
LANG_ORDER = ['rust', 'python', 'typescript', 'javascript', 'go', 'java', 'c', 'cpp',
              'csharp', 'ruby']
SRC_GLOBS = sorted('*' + e for e in EXT_LANG)


def src_lang(path):
    i = path.rfind('.')
    if i < 0 or '/' in path[i:]:
        return None
    return EXT_LANG.get(path[i:])   # case-sensitive, like the pathspecs given to git


# Tests, examples, docs, benchmarks, vendored and generated code: never gold.
NON_SOURCE_RE = re.compile(
    r'(^|/)('
    r'tests?|__tests__|__mocks__|__snapshots__|__fixtures__|specs?|testdata|test[-_]data|'
    r'testing|testutils?|test[-_]utils?|test[-_]helpers?|test[-_]support|e2e|fuzz|'
    r'fixtures?|benches|benchmarks?|bench|examples?|samples?|demos?|docs?|'
    r'vendor|vendored|third[-_]party|3rdparty|external|node_modules|bower_components|'
    r'dist|single_include|generated|gen-src'
    r')(/|$)'
    r'|_test\.go$|_test\.py$|(^|/)tests?\.(py|rs|go|rb)$|(^|/)test_[^/]*\.\w+$|_tests?\.rs$|_spec\.rb$|_test\.rb$'
    r'|\.(test|spec|e2e|bench|stories)\.[cm]?[jt]sx?$'
    r'|(Test|Tests|TestCase|IT)\.java$|(Test|Tests)\.cs$'
    r'|_(unit)?tests?\.(c|cc|cpp|cxx)$'
    r'|(^|/)(build\.rs|setup\.py|conftest\.py|noxfile\.py|fabfile\.py|gulpfile\.[cm]?js|'
    r'Gruntfile\.js|webpack\.config\.[cm]?[jt]s|rollup\.config\.[cm]?[jt]s|vite\.config\.[cm]?[jt]s|'
    r'jest\.config\.[cm]?[jt]s|babel\.config\.[cm]?js|\.eslintrc\.[cm]?js|karma\.conf\.js)$'
    r'|\.min\.[cm]?js$|\.bundle\.[cm]?js$|\.pb\.(go|cc|h)$|\.pb\.gw\.go$|_pb2(_grpc)?\.py$'
    r'|(^|/)zz_generated[^/]*\.go$|_generated\.\w+$|\.generated\.\w+$|\.g\.cs$|\.Designer\.cs$'
    r'|(^|/)[^/]*amalgamat[^/]*$',
    re.I)


# Test projects named like "Foo.Tests/", "foo-tests/", "UnitTests/", "FooTest/".
NON_SOURCE_DIR_RE = re.compile(
    r'(^|/)[^/]*[.\-_](tests?|specs?|testing|benchmarks?|benches|examples?|samples?|fixtures?|e2e|'
    r'integration[-_]?tests?)(/|$)', re.I)
NON_SOURCE_CAMEL_RE = re.compile(r'(^|/)[^/]*(?<=[a-z0-9])(Tests?|Specs?|Benchmarks?|Samples?|Examples?)(/|$)'
                                 r'|(^|/)AssemblyInfo\.cs$')


def is_non_source(path):
    return bool(NON_SOURCE_RE.search(path) or NON_SOURCE_DIR_RE.search(path)
                or NON_SOURCE_CAMEL_RE.search(path))


def is_gold_candidate(path):
    return src_lang(path) is not None and not is_non_source(path)


# Code in languages Loupe does not index: a change that also edits such (non-test) files has an
# incomplete gold set, so it is skipped.
OTHER_CODE_EXT = {
    '.kt', '.kts', '.scala', '.sc', '.swift', '.m', '.mm', '.cu', '.cuh', '.php', '.lua', '.zig',
    '.dart', '.ex', '.exs', '.erl', '.hrl', '.hs', '.ml', '.mli', '.clj', '.cljs', '.vue',
    '.svelte', '.groovy', '.fs', '.fsx', '.vb', '.pl', '.pm', '.r', '.R', '.jl', '.nim', '.sol',
    '.metal', '.cl', '.glsl', '.hlsl', '.wgsl', '.comp', '.vert', '.frag', '.pyx', '.pxd',
    '.elm', '.cr', '.d', '.v', '.sv', '.vhd', '.f90', '.ada', '.pas', '.coffee', '.astro',
}


def is_other_code(path):
    i = path.rfind('.')
    return i >= 0 and '/' not in path[i:] and path[i:] in OTHER_CODE_EXT and not is_non_source(path)


def example_lang(gold, repo_lang):
    cnt = collections.Counter()
    for p in gold:
        cnt[src_lang(p)] += 1
    if cnt.get('c_or_cpp'):
        n = cnt.pop('c_or_cpp')
        if cnt.get('cpp') or (not cnt.get('c') and repo_lang == 'cpp'):
            cnt['cpp'] += n
        else:
            cnt['c'] += n
    return max(cnt, key=lambda l: (cnt[l], -LANG_ORDER.index(l)))


# ---------------------------------------------------------------------------------------------
# Commit messages.
TRIVIAL_SUBJ = re.compile(
    r'^\s*(\[?(bump|bumped|release|releasing|released|version|prepare|preparing|changelog|'
    r'update changelog|chore|ci|build\(deps\)|build\(deps-dev\)|deps|dep|doc|docs|'
    r'fmt|rustfmt|cargo fmt|gofmt|clang-format|prettier|black|isort|clippy|typo|typos|style|'
    r'lint|format|formatting|reformat|revert|reverts|readme|license|licence|copyright|test|tests|'
    r'bench|pre-commit|\[pre-commit\.ci\]|wip|merge|automated|auto-update|autoupdate|'
    r'cherry-pick|backport|tag|translation|translations|i18n|l10n)\b'
    r'|v?\d+\.\d+(\.\d+)?([-.]\w+)?\s*$'
    r'|(update[sd]?|upgraded?|upgrades|bump(ed|s)?) (the )?(dependencies|dependency|deps|copyright|lockfile|lock file|'
    r'snapshots?|docs|documentation|readme|changelog|version)'
    r'|fix(ed|es)? (a |some )?(typo|typos|spelling|doc|docs|comment|comments|formatting|lint|ci|'
    r'the build|build|tests?)\b'
    r'|add(ed)? (a |some |more )?tests?\b|apply suggestions? from code review|address review'
    r'|initial commit|first commit|(this|it) reverts commit|update (\S+ )?to v?\d'
    r'|(\d{4}[.-]\d\d[.-]\d\d,? )?v?\d+\.\d+(\.\d+)?\b'          # "0.11.0 release", "2013.08.22, Version 0.11.8"
    r'|(publish|published|publishing|tagging|tagged)\b'
    r'|(update|updated|create|created|delete|deleted|add|added|rename|renamed)\s+\S+\.\w{1,5}\s*$'  # GitHub web-edit default
    r')', re.I)
TRAILER = re.compile(
    r'^\s*(signed-off-by|co-authored-by|co-authored|reviewed-by|reviewed-on|acked-by|tested-by|'
    r'reported-by|suggested-by|helped-by|authored-by|authored by|requested-by|mentored-by|original-author|cc|ref|refs|'
    r'pr-url|pr|change-id|changelog|release-note|release-notes|bug|issue|issues|jira|'
    r'differential revision|pull request resolved|ghstack-source-id|fixes|closes|resolves|'
    r'auto-submit|commit-queue|upstream|git-svn-id|approved-by|backport-of)\s*:.*$', re.I | re.M)
ISSUE_LINK = re.compile(
    r'^\s*[-*]?\s*(fix(es|ed)?|close[sd]?|resolve[sd]?|see|ref(s)?|part of|related( to)?|'
    r'addresses|address|for|follow[- ]up( to| of)?|supersedes|replaces|depends on|'
    r'cherry[- ]picked from|backport of)\s*:?\s*'
    r'(#\d+|[\w.-]+/[\w.-]+#\d+|gh-\d+|https?://\S+)([\s,]*(and\s+)?(#\d+|[\w.-]+/[\w.-]+#\d+|'
    r'gh-\d+|https?://\S+))*\s*\.?\s*$', re.I | re.M)
CHERRY = re.compile(r'^\s*\(cherry picked from commit [0-9a-f]+\)\s*$', re.I | re.M)
HTML_COMMENT = re.compile(r'<!--.*?-->', re.S)
CHECKBOX = re.compile(r'^\s*[-*]\s*\[[ xX]?\]\s.*$', re.M)
SKIP_CI = re.compile(r'\[(skip ci|ci skip|no ci|skip actions|actions skip)\]', re.I)
PR_SUFFIX = re.compile(r'\s*\((#\d+(,\s*#\d+)*)\)\s*$')
SQUASH_SUFFIX = re.compile(r'\(#\d+\)\s*$')
AREA_PREFIX = re.compile(r'^([\w./*-]+(\([^)]*\))?!?(\s*,\s*[\w./*-]+)*)\s*:\s+')
BOT_AUTHOR = re.compile(r'\[bot\]|dependabot|renovate|greenkeeper|snyk-bot|pre-commit-ci|'
                        r'github-actions|allcontributors|mergify|imgbot|weblate', re.I)
MAX_QUERY_CHARS = 6000
BORS_NOISE = re.compile(r'^\s*(@?bors\S*\s+(r\+|r=\S+|retry|try|delegate\S*|d=\S+|p=\S+).*|'
                        r'([ra]=\S+\s*)+|\U0001F916)\s*$', re.M)
GENERATED_MSG = re.compile(r'auto-?generated by \[?create-pull-request|this pr was (automatically )?created by|'
                           r'this pull request was (automatically )?(generated|created)|^\s*automated changes by', re.I | re.M)
MAX_SAME_QUERY = 2   # per repository: keep at most this many examples with the same query text
# leading bullets, gitmoji (":bug:" or the emoji itself), "[WIP]"-style tags are not content
LEAD_NOISE = re.compile(r'^([-*+\u2022>\s]+|(:[\w+-]+:\s*)+|[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F\u200D]+\s*)+')


def clean_message(msg):
    msg = HTML_COMMENT.sub('', msg)
    msg = TRAILER.sub('', msg)
    msg = ISSUE_LINK.sub('', msg)
    msg = CHERRY.sub('', msg)
    msg = CHECKBOX.sub('', msg)
    msg = SKIP_CI.sub('', msg)
    msg = BORS_NOISE.sub('', msg)
    # hg-converted metadata; dependabot-style metadata block and other "---" separated tails
    msg = re.split(r'^--HG--\s*$', msg, maxsplit=1, flags=re.M)[0]
    msg = re.split(r'^-{3,}\s*\n(?=[\w-]+:)', msg, maxsplit=1, flags=re.M)[0]
    lines = msg.strip().splitlines()
    if not lines:
        return '', '', ''
    subj = PR_SUFFIX.sub('', lines[0]).strip()
    subj = LEAD_NOISE.sub('', subj)
    body = '\n'.join(l.rstrip() for l in lines[1:]).strip()
    body = re.sub(r'\n{3,}', '\n\n', body)
    m = AREA_PREFIX.match(subj)
    return subj, body, (m.group(1) if m else '')


MERGE_GITHUB = re.compile(r'Merge pull request #(\d+) from \S+[^\n]*\n(.*)', re.S)
MERGE_GITLAB = re.compile(r"Merge branch '[^']*' into '[^']*'\s*\n(.*)See merge request [^\n]*!(\d+)", re.S)
MERGE_BORS = re.compile(r'Merge #(\d+)\s*\n\s*\n?(.*)', re.S)      # bors-ng: "Merge #N\n\nN: title r=a a=b\n\nbody"
MERGE_HOMU = re.compile(r'Auto merge of #(\d+) - [^\n]*\n(.*)', re.S)   # homu / bors (rust-lang)


def pr_message(msg):
    """For a merge commit: (pr_number, description) when it merges a pull request, else None."""
    m = MERGE_GITHUB.match(msg)
    if m:
        return m.group(1), m.group(2).strip()
    m = MERGE_GITLAB.match(msg)
    if m:
        return m.group(2), m.group(1).strip()
    m = MERGE_HOMU.match(msg)
    if m:
        return m.group(1), m.group(2).strip()
    m = MERGE_BORS.match(msg)
    if m:
        body = m.group(2).strip()
        body = re.sub(r'^\d+:\s*', '', body)
        first, _, rest = body.partition('\n')
        first = re.sub(r'\s+[ra]=\S+(\s+[ra]=\S+)*\s*$', '', first)
        return m.group(1), (first + '\n' + rest).strip()
    return None


# ---------------------------------------------------------------------------------------------
# git helpers.
def git_dir_of(mirrors, repo):
    base = os.path.join(mirrors, repo.replace('/', '+'), 'repo')
    if os.path.isdir(os.path.join(base, '.git')):
        return os.path.join(base, '.git')
    return base if os.path.isfile(os.path.join(base, 'HEAD')) else None


def git_cmd(gd, *args):
    return ['git', '-c', 'core.quotepath=off', '--git-dir', gd, *args]


def git(gd, *args, inp=None, check=True):
    return subprocess.run(git_cmd(gd, *args), input=inp, capture_output=True, text=True,
                          errors='replace', check=check).stdout


def unquote_path(p):
    if len(p) >= 2 and p[0] == '"' and p[-1] == '"':
        try:
            return p[1:-1].encode('latin-1', 'backslashreplace').decode('unicode_escape') \
                .encode('latin-1').decode('utf-8', 'replace')
        except Exception:
            return p[1:-1]
    return p


def root_commits(gd, ref='HEAD'):
    return set(git(gd, 'rev-list', '--max-parents=0', ref).split())


def load_forbidden_roots(path):
    roots = {}
    if os.path.exists(path):
        for line in open(path):
            line = line.split('#', 1)[0].strip()
            if line:
                sha, _, repo = line.partition(' ')
                roots[sha] = repo.strip()
    return roots


# ---------------------------------------------------------------------------------------------
# Mining one repository.
LOG_FMT = '%x1e%H%x1f%P%x1f%cI%x1f%an <%ae>%x1f%B%x1f'
NULL_SHA = '0' * 40


def iter_log(gd, ref):
    """Yield (sha, parents, date, author, msg, changes) for every first-parent commit, newest
    first; changes = {path: (status, old_blob, new_blob, new_mode)} against the first parent.
    Only trees are read (no blobs): snapshots may lack big blobs, and it is fast."""
    p = subprocess.Popen(git_cmd(gd, 'log', '--first-parent', '--diff-merges=first-parent',
                                 '--no-renames', '--raw', '--no-abbrev', '--no-color',
                                 '--format=' + LOG_FMT, ref),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         errors='replace', bufsize=1 << 20)
    buf = ''

    def parse(rec):
        sha, parents, date, author, msg, tail = rec.split('\x1f', 5)
        changes = {}
        for line in tail.splitlines():
            if line[:1] == ':':
                meta, _, path = line.partition('\t')
                f = meta[1:].split()   # old_mode new_mode old_blob new_blob status
                if len(f) >= 5:
                    changes[unquote_path(path)] = (f[4], f[2], f[3], f[1])
        return sha, parents.split(), date, author, msg, changes

    while True:
        chunk = p.stdout.read(1 << 20)
        if not chunk:
            break
        buf += chunk
        recs = buf.split('\x1e')
        buf = recs.pop()
        for rec in recs:
            if rec.strip():
                yield parse(rec)
    if buf.strip():
        yield parse(buf)
    err = p.stderr.read()
    p.wait()
    if p.returncode != 0:
        raise RuntimeError(f'git log failed ({p.returncode}): {err.strip()[:300]}')


def missing_objects(gd, shas):
    """The subset of object ids absent from the repository (one cat-file process)."""
    shas = sorted(set(shas))
    if not shas:
        return set()
    out = git(gd, 'cat-file', '--batch-check', inp=''.join(s + '\n' for s in shas))
    return {l.split()[0] for l in out.splitlines() if l.endswith(' missing')}


HUNK_RE = re.compile(r'^@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@')


def diff_batch(gd, pairs):
    """pairs: [(commit, parent)] -> {commit: {path: {'hunks': [[s, e], ...], 'lines': n,
    'binary': bool}}} for every MODIFIED source file (by extension), from one
    `git diff-tree --stdin -p -U0` process.  Hunk ranges are in the parent version (1-based); a
    pure insertion is recorded as [n, n], n = the line after which text was inserted (as
    make_git_history_eval.py does).  With -U0 the hunk header counts are exactly numstat's
    deleted/added lines, so 'lines' = added + deleted without reading the hunk bodies."""
    out = {}
    if not pairs:
        return out
    inp = ''.join(f'{c} {p}\n' for c, p in pairs).encode()
    p = subprocess.Popen(git_cmd(gd, 'diff-tree', '--stdin', '-p', '-U0', '--no-renames',
                                 '--diff-filter=M', '--no-color', '--no-ext-diff', '--no-textconv',
                                 '--diff-algorithm=myers', '--', *SRC_GLOBS),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         bufsize=1 << 20)
    import threading
    errbuf = []
    tw = threading.Thread(target=lambda: (p.stdin.write(inp), p.stdin.close()))
    te = threading.Thread(target=lambda: errbuf.append(p.stderr.read()))
    tw.start()
    te.start()
    cur = None
    info = None
    hex40 = re.compile(r'^[0-9a-f]{40}( |$)')
    for bline in p.stdout:   # bytes: a lone CR inside a line must not split it
        if bline[:1] in (b'+', b'-', b' ', b'\\'):
            continue
        line = bline.decode('utf-8', 'replace').rstrip('\n')
        c0 = line[:1]
        if c0 == '@':
            if info is not None:
                m = HUNK_RE.match(line)
                if m:
                    s = int(m.group(1))
                    n = 1 if m.group(2) is None else int(m.group(2))
                    n_new = 1 if m.group(3) is None else int(m.group(3))
                    info['hunks'].append([s, s + n - 1] if n > 0 else [max(s, 1), max(s, 1)])
                    info['lines'] += n + n_new
        elif line.startswith('diff --git '):
            rest = line[len('diff --git '):]
            if rest.startswith('"'):
                m = re.match(r'"a/(.*)" "b/', rest)
                path = unquote_path('"' + m.group(1) + '"') if m else None
            else:
                n = (len(rest) - 5) // 2
                path = rest[2:2 + n] if n > 0 else None
            info = None
            if cur is not None and path:
                info = out[cur].setdefault(path, dict(hunks=[], lines=0, binary=False))
        elif line.startswith('Binary files ') or line.startswith('GIT binary patch'):
            if info is not None:
                info['binary'] = True
        elif hex40.match(line):
            cur = line[:40]
            out.setdefault(cur, {})
            info = None
    tw.join()
    te.join()
    p.wait()
    if p.returncode != 0:
        raise RuntimeError(f'git diff-tree failed ({p.returncode}): {b"".join(errbuf).decode(errors="replace").strip()[:300]}')
    return out


def mine_repo(gd, repo, repo_lang, ref, a):
    stats = collections.Counter()
    cands = []
    # pass 1: messages and file lists (trees only)
    for sha, parents, date, author, msg, changes in iter_log(gd, ref):
        stats['total'] += 1
        if not parents:
            stats['skip_no_parent'] += 1
            continue
        parent = parents[0]
        is_merge = len(parents) > 1
        source = 'commit'
        pr = None
        if is_merge:
            pm = pr_message(msg)
            if not pm:
                stats['skip_merge_not_pr'] += 1
                continue
            pr, msg = pm
            source = 'pr_merge'
            if not msg:
                stats['skip_short'] += 1
                continue
        else:
            first = msg.strip().split('\n', 1)[0]
            m = SQUASH_SUFFIX.search(first)
            if m:
                source = 'squash'
                pr = re.search(r'#(\d+)', m.group(0)).group(1)
            if BOT_AUTHOR.search(author):
                stats['skip_bot'] += 1
                continue
        subj, body, area = clean_message(msg)
        if not subj or TRIVIAL_SUBJ.search(subj):
            stats['skip_trivial'] += 1
            continue
        subj_noarea = AREA_PREFIX.sub('', subj, count=1) if area else subj
        if area and (not subj_noarea or TRIVIAL_SUBJ.search(subj_noarea)):   # "releaser: Prepare ..."
            stats['skip_trivial'] += 1
            continue
        if GENERATED_MSG.search(msg):
            stats['skip_bot'] += 1
            continue
        query = (subj_noarea + ('\n\n' + body if body else '')).strip()
        if len(query) > MAX_QUERY_CHARS:
            query = query[:MAX_QUERY_CHARS].rsplit('\n', 1)[0].rstrip()
        if len(re.findall(r'\w+', query)) < a.min_words:
            stats['skip_short'] += 1
            continue
        if len(changes) > a.max_files_touched:
            stats['skip_too_many_files'] += 1
            continue
        gold_cand = [p for p, ch in changes.items() if ch[0].startswith('M') and is_gold_candidate(p)]
        if not gold_cand:
            stats['skip_no_gold'] += 1
            continue
        if any(is_other_code(p) for p in changes):
            stats['skip_unsupported_code'] += 1
            continue
        blobs = [b for p, ch in changes.items() if src_lang(p) and ch[3] != '160000'
                 for b in ch[1:3] if b != NULL_SHA]
        cands.append(dict(sha=sha, parent=parent, date=date, query=query, area=area,
                          is_merge=is_merge, source=source, pr=pr, changes=changes,
                          gold_cand=gold_cand, blobs=blobs))
    # snapshots lack blobs of 4 MiB and more: drop commits whose source diff would need one
    missing = missing_objects(gd, [b for c in cands for b in c['blobs']])
    if missing:
        n0 = len(cands)
        cands = [c for c in cands if not any(b in missing for b in c['blobs'])]
        stats['skip_missing_blob'] += n0 - len(cands)
    # pass 2: hunks and line counts of modified source files, one diff-tree process
    diffs = diff_batch(gd, [(c['sha'], c['parent']) for c in cands])
    rows = []
    for c in cands:
        d = diffs.get(c['sha'], {})
        gold = sorted(p for p in c['gold_cand'] if p in d and not d[p]['binary'] and d[p]['lines'] > 0)
        if not gold:
            stats['skip_no_gold'] += 1
            continue
        if len(gold) > a.max_gold:
            stats['skip_too_many_gold'] += 1
            continue
        nlines = sum(d[p]['lines'] for p in gold)
        if nlines > a.max_gold_lines:
            stats['skip_too_many_lines'] += 1
            continue
        changes = c['changes']
        src = [(ch[0], p) for p, ch in changes.items() if is_gold_candidate(p)]
        added = sorted(p for st, p in src if st.startswith('A'))
        deleted = sorted(p for st, p in src if st.startswith('D'))
        gset = set(gold) | set(added) | set(deleted)
        query = c['query']
        qlow = query.lower()
        leak = sorted({p for p in gold if p.rsplit('/', 1)[-1].lower() in qlow or
                       (len(p.rsplit('/', 1)[-1].rsplit('.', 1)[0]) >= 4 and
                        re.search(r'\b' + re.escape(p.rsplit('/', 1)[-1].rsplit('.', 1)[0].lower()) + r'\b', qlow))})
        rows.append(dict(
            repo=repo, base_commit=c['parent'], query=query, gold_files=gold,
            commit=c['sha'], date=c['date'], is_pr_merge=c['is_merge'], source=c['source'],
            lang=example_lang(gold, repo_lang), pr_number=int(c['pr']) if c['pr'] else None,
            query_area_prefix=c['area'], gold_added_files=added, gold_deleted_files=deleted,
            other_changed_files=sorted(p for p in changes if p not in gset),
            gold_hunks_in_base={p: d[p]['hunks'] for p in gold}, gold_lines_changed=nlines,
            gold_name_in_query=leak))
    rows.reverse()  # oldest first
    seen = collections.Counter()
    uniq = []
    for r in rows:
        seen[r['query']] += 1
        if seen[r['query']] > MAX_SAME_QUERY:
            stats['skip_duplicate_query'] += 1
        else:
            uniq.append(r)
    rows = uniq
    stats['qualifying'] = len(rows)
    if a.max and len(rows) > a.max:
        step = len(rows) / a.max
        rows = [rows[int(i * step)] for i in range(a.max)]
    stats['kept'] = len(rows)
    for r in rows:
        stats['kept_' + r['source']] += 1
        stats['lang_' + r['lang']] += 1
    return rows, dict(stats)


def out_name(repo):
    return repo.replace('/', '+')


def work_one(job):
    repo, repo_lang, head, a = job
    t0 = time.time()
    jpath = os.path.join(a.out, out_name(repo) + '.jsonl')
    spath = os.path.join(a.out, out_name(repo) + '.stats.json')
    try:
        if repo.lower() in FORBIDDEN_LC:
            return repo, dict(status='refused', reason='forbidden repository')
        gd = git_dir_of(a.mirrors, repo)
        if gd is None:
            return repo, dict(status='failed', reason='no mirror under ' + a.mirrors)
        ref = head or git(gd, 'rev-parse', 'HEAD').strip()
        if git(gd, 'cat-file', '-t', ref, check=False).strip() != 'commit':
            return repo, dict(status='failed', reason=f'mirror lacks commit {ref}')
        froots = load_forbidden_roots(a.forbidden_roots)
        bad = sorted({froots[r] for r in root_commits(gd, ref) if r in froots})
        if bad:
            return repo, dict(status='refused', reason='shares a root commit with forbidden ' + ', '.join(bad))
        rows, st = mine_repo(gd, repo, repo_lang, ref, a)
        st.update(status='ok', head=ref, max=a.max, seconds=round(time.time() - t0, 1))
        tmp = jpath + '.tmp'
        with open(tmp, 'w') as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + '\n')
        os.replace(tmp, jpath)
        with open(spath + '.tmp', 'w') as f:
            json.dump(st, f, indent=1, sort_keys=True)
        os.replace(spath + '.tmp', spath)   # written last: its presence marks completion
        return repo, st
    except Exception as e:  # keep the other repositories going
        return repo, dict(status='failed', reason=f'{type(e).__name__}: {e}')


def read_mined(data_dir, repo):
    """The examples mined from `repo` (oldest first), or None when it was
    not mined into `data_dir`."""
    path = os.path.join(data_dir, out_name(repo) + '.jsonl')
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def read_repos_tsv(path):
    out = []
    with open(path) as f:
        header = f.readline().rstrip('\n').split('\t')
        for line in f:
            if not line.strip() or line.startswith('#'):
                continue
            row = dict(zip(header, line.rstrip('\n').split('\t')))
            out.append(row)
    return out


def cmd_mine(a):
    os.makedirs(a.out, exist_ok=True)
    repos = read_repos_tsv(a.repos)
    if a.only:
        keep = set(a.only.split(','))
        repos = [r for r in repos if r['repo'] in keep]
    froots = load_forbidden_roots(a.forbidden_roots)
    missing = sorted(set(FORBIDDEN) - set(froots.values()))
    if missing:
        print(f'note: no root commits recorded for {len(missing)} forbidden repos '
              f'(fork check skipped for them): {", ".join(missing)}', file=sys.stderr)
    results = {}
    jobs = []
    for r in repos:
        repo, head = r['repo'], (r.get('head') or '').strip() or None
        spath = os.path.join(a.out, out_name(repo) + '.stats.json')
        jpath = os.path.join(a.out, out_name(repo) + '.jsonl')
        if os.path.exists(spath) and os.path.exists(jpath) and not a.force:
            st = json.load(open(spath))
            if st.get('status') == 'ok' and (head is None or st.get('head') == head) \
                    and st.get('max') == a.max:
                results[repo] = st
                continue
        jobs.append((repo, r.get('lang', ''), head, a))
    t0 = time.time()
    print(f'{len(results)} repos already done, {len(jobs)} to mine with {a.jobs} jobs', file=sys.stderr)

    def report(repo, st):
        results[repo] = st
        if st.get('status') == 'ok':
            print(f'[{len(results)}/{len(repos)}] {repo}: kept {st.get("kept", 0)} of '
                  f'{st.get("total", 0)} commits ({st.get("qualifying", 0)} qualifying) '
                  f'in {st.get("seconds")}s', file=sys.stderr, flush=True)
        else:
            print(f'[{len(results)}/{len(repos)}] {repo}: {st["status"].upper()}: {st.get("reason")}',
                  file=sys.stderr, flush=True)

    if a.jobs <= 1:
        for j in jobs:
            report(*work_one(j))
    else:
        from concurrent.futures import ProcessPoolExecutor, as_completed
        with ProcessPoolExecutor(a.jobs) as ex:
            futs = [ex.submit(work_one, j) for j in jobs]
            for fu in as_completed(futs):
                report(*fu.result())
    write_stats(a, repos, results, time.time() - t0)



def write_stats(a, repos, results, seconds):
    tot = collections.Counter()
    by_lang_repo = collections.Counter()
    tsv_lang = {r['repo']: r.get('lang', '') for r in repos}
    split = {r['repo']: r.get('split', '') for r in repos}
    by_split = collections.Counter()
    for repo, st in results.items():
        if st.get('status') != 'ok':
            tot['repos_' + st.get('status', 'failed')] += 1
            continue
        tot['repos_ok'] += 1
        by_lang_repo[tsv_lang.get(repo, '')] += 1
        by_split[split.get(repo, '') or 'unknown'] += st.get('kept', 0)
        for k, v in st.items():
            if isinstance(v, int) and not isinstance(v, bool) and k != 'max':
                tot[k] += v
    summary = dict(
        totals=dict(sorted(tot.items())),
        kept_by_source={k[5:]: v for k, v in sorted(tot.items()) if k.startswith('kept_')},
        kept_by_lang={k[5:]: v for k, v in sorted(tot.items()) if k.startswith('lang_')},
        kept_by_split=dict(by_split), repos_by_lang=dict(by_lang_repo),
        seconds_this_run=round(seconds, 1), max_per_repo=a.max,
        per_repo={r: results[r] for r in sorted(results)})
    with open(os.path.join(a.out, 'stats.json'), 'w') as f:
        json.dump(summary, f, indent=1)
    print(json.dumps({k: summary[k] for k in ('kept_by_source', 'kept_by_lang', 'kept_by_split',
                                              'seconds_this_run')}), file=sys.stderr)
    print(f'total kept: {tot.get("kept", 0)} from {tot.get("repos_ok", 0)} repos', file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# Helpers that produce the checked-in lists.
def cmd_forbidden_roots(a, path):
    old = load_forbidden_roots(path)
    have = {}
    missing = []
    for repo in FORBIDDEN:
        gd = git_dir_of(a.mirrors, repo)
        if gd is None:
            missing.append(repo)
            continue
        for r in sorted(root_commits(gd)):
            have[r] = repo
    for sha, repo in old.items():   # keep roots recorded earlier from mirrors since removed
        if repo not in {v for v in have.values()}:
            have[sha] = repo
            if repo in missing:
                missing.remove(repo)
    with open(path, 'w') as f:
        f.write('# root commits (git rev-list --max-parents=0 HEAD) of the forbidden repositories\n')
        f.write('# written by tools/train/mine.py --write-forbidden-roots; any mirror sharing one is refused\n')
        for repo in missing:
            f.write(f'# missing (no mirror when written; fork check skipped): {repo}\n')
        for sha, repo in sorted(have.items(), key=lambda kv: (FORBIDDEN.index(kv[1]), kv[0])):
            f.write(f'{sha} {repo}\n')
    print(f'{len(have)} roots of {len(FORBIDDEN) - len(missing)} repos written to {path}; '
          f'missing: {", ".join(missing) or "none"}', file=sys.stderr)


LICENCE_FILE = re.compile(
    r'^([A-Z]+-)?(licen[cs]e|copying|unlicense)'
    r'([-_.](mit|apache|isc|bsd|zlib|unlicense|boost)[\w.-]*|\.(md|txt|rst|markdown))?$', re.I)
LICENCE_FILE_SKIP = re.compile(r'third|comm|enterprise|notice|(^|[-_.])ee([-_.]|$)', re.I)
# (signature in lower-cased, whitespace-normalised text, SPDX id); the EARLIEST match wins, so
# "licensed under MIT ... portions under the PSF licence" and GPL texts quoting LGPL/AGPL work.
LICENCE_SIGS = [
    (r'european union public licen[cs]e', 'EUPL-1.2'),
    (r'apache license,? version 2\.0|apache license\s*version 2\.0|licen[cs]ed under (the )?apache (license )?2\.0|apache-2\.0', 'Apache-2.0'),
    (r'mozilla public license,? (v\.? ?|version )?2\.0', 'MPL-2.0'),
    (r'gnu affero general public license', 'AGPL'),
    (r'gnu lesser general public license|gnu library general public license|\blgplv?[23]', 'LGPL'),
    (r'gnu general public license', 'GPL'),
    (r'eclipse public license', 'EPL'),
    (r'server side public license|redis source available license', 'SSPL-1.0 OR RSALv2'),
    (r'business source license', 'BUSL-1.1'),
    (r'boost software license', 'BSL-1.0'),
    (r'this is free and unencumbered software released into the public domain', 'Unlicense'),
    (r'permission is hereby granted, free of charge|licen[cs]ed under the (terms of the )?mit licen[cs]e|^the mit licen[cs]e', 'MIT'),
    (r'permission to use, copy, modify, and/or distribute this software for any purpose|'
     r'permission to use, copy, modify, and distribute this software for any purpose with or without fee', 'ISC'),
    (r'by obtaining, using, and/or copying this software', 'MIT-CMU'),
    (r'permission to use, copy, modify, and distribute this software and its documentation for any purpose, without fee, and without a written agreement', 'PostgreSQL'),
    (r'copyright and permission notice', 'curl'),
    (r'redistribution and use in source and binary forms', 'BSD'),
    (r'provided [\'"]as-is[\'"], without any express or implied warranty', 'Zlib'),
    (r'python software foundation license', 'PSF-2.0'),
]


def classify_licence(text):
    m = re.search(r'SPDX-License-Identifier:\s*([\w.+-]+(\s+(AND|OR|WITH)\s+[\w.+-]+)*)', text)
    if m:
        return m.group(1)
    tl = ' '.join(text.split()).lower()
    best = None
    for sig, lid in LICENCE_SIGS:
        m = re.search(sig, tl)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), lid)
    if best is None:
        return 'unknown'
    pos, lid = best
    window = tl[pos:pos + 400]
    if lid in ('GPL', 'LGPL', 'AGPL'):
        if lid == 'AGPL':
            return 'AGPL-3.0'
        if lid == 'LGPL':
            return 'LGPL-2.1' if re.search(r'version 2|2\.1|lgplv2', window) else 'LGPL-3.0'
        return 'GPL-3.0' if re.search(r'version 3|v3', window) else 'GPL-2.0'
    if lid == 'EPL':
        return 'EPL-2.0' if '2.0' in window else 'EPL-1.0'
    if lid == 'BSD':
        return 'BSD-3-Clause' if ('neither the name' in tl or 'endorse or promote' in tl) else 'BSD-2-Clause'
    return lid


def detect_licence(gd, head):
    """SPDX-like id(s) from the licence files at the top of the tree; several (LICENSE-MIT +
    LICENSE-APACHE, or LICENSE + COPYING) are joined with OR; 'unknown' if unclear."""
    found = []
    for line in git(gd, 'ls-tree', head).splitlines():
        meta, _, name = line.partition('\t')
        if meta.split()[1] != 'blob' or not LICENCE_FILE.match(name) or LICENCE_FILE_SKIP.search(name):
            continue
        lic = classify_licence(git(gd, 'show', f'{head}:{name}', check=False))
        if lic != 'unknown' and lic not in found:
            found.append(lic)
    return ' OR '.join(sorted(found)) if found else 'unknown'


def split_of(repo):
    return 'valid' if int(hashlib.sha1(repo.encode()).hexdigest(), 16) % 8 == 0 else 'train'


def cmd_make_tsv(a, listfile):
    froots = load_forbidden_roots(a.forbidden_roots)
    rows = []
    seen_roots = {}
    for line in open(listfile):
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        repo, lang = line.split()[:2]
        if repo.lower() in FORBIDDEN_LC:
            print(f'refused (forbidden): {repo}', file=sys.stderr)
            continue
        gd = git_dir_of(a.mirrors, repo)
        if gd is None:
            print(f'skipped (no mirror): {repo}', file=sys.stderr)
            continue
        head = git(gd, 'rev-parse', 'HEAD').strip()
        roots = root_commits(gd, head)
        bad = sorted({froots[r] for r in roots if r in froots})
        if bad:
            print(f'refused (fork/copy of {", ".join(bad)}): {repo}', file=sys.stderr)
            continue
        dup = sorted({seen_roots[r] for r in roots if r in seen_roots})
        if dup:
            print(f'skipped (shares a root commit with {", ".join(dup)}): {repo}', file=sys.stderr)
            continue
        for r in roots:
            seen_roots[r] = repo
        rows.append((repo, lang, split_of(repo), head, detect_licence(gd, head)))
    with open(a.repos, 'w') as f:
        f.write('repo\tlang\tsplit\thead\tlicence\n')
        for r in rows:
            f.write('\t'.join(r) + '\n')
    print(f'{len(rows)} repos written to {a.repos}', file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--mirrors', default='/work/.mirror')
    ap.add_argument('--repos', default=os.path.join(HERE, 'repos.tsv'))
    ap.add_argument('--out')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--max', type=int, default=2000, help='keep at most N per repo, evenly spaced over history; 0 = all')
    ap.add_argument('--min-words', type=int, default=6)
    ap.add_argument('--max-gold', type=int, default=6)
    ap.add_argument('--max-files-touched', type=int, default=25)
    ap.add_argument('--max-gold-lines', type=int, default=400)
    ap.add_argument('--forbidden-roots', default=DEFAULT_FORBIDDEN_ROOTS)
    ap.add_argument('--only', help='comma-separated owner/name subset of --repos')
    ap.add_argument('--force', action='store_true', help='re-mine repos whose output exists')
    ap.add_argument('--write-forbidden-roots', nargs='?', const=DEFAULT_FORBIDDEN_ROOTS, metavar='PATH')
    ap.add_argument('--make-repos-tsv', metavar='LIST')
    a = ap.parse_args()
    if a.write_forbidden_roots:
        return cmd_forbidden_roots(a, a.write_forbidden_roots)
    if a.make_repos_tsv:
        return cmd_make_tsv(a, a.make_repos_tsv)
    if not a.out:
        ap.error('--out is required to mine')
    cmd_mine(a)


if __name__ == '__main__':
    main()
