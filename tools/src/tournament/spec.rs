//! Engine specifications from the command line:
//! `cmd=PATH,name=X,arg=A,arg=B,dir=D,env=K=V,turn_ms=N,match_ms=N,max_node=N`.
//!
//! Parsing and validation only (the command must exist and be executable before any game
//! starts); no process handling. Depends on std only.

use std::path::{Path, PathBuf};

/// How to start one engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineSpec {
    pub name: String,
    /// The program, resolved: a path that exists (searched in PATH when given without a slash).
    pub cmd: PathBuf,
    pub args: Vec<String>,
    /// Working directory of the process (Gomocup engines find their data files relative to it).
    pub dir: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    /// This engine's own time per move and per game (time odds), in place of `--turn-ms` and
    /// `--match-ms`.
    pub turn_ms: Option<u64>,
    pub match_ms: Option<u64>,
    /// Nodes per move, sent as `INFO max_node` (Yixin-Board's levels): a match at fixed work
    /// per move, which a busy or slower machine does not change. The time limits still apply.
    pub max_node: Option<u64>,
}

/// The `--engine` part of `tournament --help`.
pub const SPEC_HELP: &str = "\
ENGINE SPEC
  --engine takes comma-separated key=value pairs (c-gomoku-cli style):
    cmd=PATH    the program (required); a bare name is searched in PATH
    name=X      display name (default: the program's file name; duplicates get #2, #3 ...)
    arg=A       one command-line argument, repeat for more (no commas inside)
    dir=D       working directory of the process (default: the manager's)
    env=K=V     an environment variable for the process, repeatable
    turn_ms=N   this engine's time per move in ms, in place of --turn-ms (time odds)
    match_ms=N  this engine's time per game in ms, in place of --match-ms
    max_node=N  nodes per move for this engine (INFO max_node; pbrain-fivezero: MCTS visits),
                so the match measures equal work, not a busy machine's speed; time limits
                still apply
  e.g. --engine cmd=target/release/pbrain-fivezero,name=fz --engine cmd=./pbrain-rapfi,dir=/opt/rapfi";

impl EngineSpec {
    /// Parses one `--engine` value without touching the file system.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (mut name, mut cmd, mut args, mut dir, mut env) = (None, None, vec![], None, vec![]);
        let (mut turn_ms, mut match_ms, mut max_node) = (None, None, None);
        let millis = |key: &str, value: &str| match value.parse::<u64>() {
            Ok(n) if n >= 1 => Ok(Some(n)),
            _ => Err(format!(
                "engine spec `{text}`: {key} needs a whole number of milliseconds, at least 1, got `{value}`"
            )),
        };
        for part in text.split(',').filter(|p| !p.trim().is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("engine spec `{text}`: expected key=value, got `{part}`"))?;
            match key.trim() {
                "cmd" => cmd = Some(PathBuf::from(value)),
                "name" => name = Some(value.to_string()),
                "arg" => args.push(value.to_string()),
                "dir" => dir = Some(PathBuf::from(value)),
                "env" => {
                    let (k, v) = value.split_once('=').ok_or_else(|| {
                        format!("engine spec `{text}`: env needs env=KEY=VALUE, got `{value}`")
                    })?;
                    env.push((k.to_string(), v.to_string()));
                }
                "turn_ms" => turn_ms = millis("turn_ms", value)?,
                "match_ms" => match_ms = millis("match_ms", value)?,
                "max_node" => match value.parse::<u64>() {
                    Ok(n) if n >= 1 => max_node = Some(n),
                    _ => {
                        return Err(format!(
                            "engine spec `{text}`: max_node needs a whole number of nodes, at least 1, got `{value}`"
                        ));
                    }
                },
                other => {
                    return Err(format!(
                        "engine spec `{text}`: unknown key `{other}` \
                         (cmd, name, arg, dir, env, turn_ms, match_ms, max_node)"
                    ));
                }
            }
        }
        let cmd = cmd.ok_or_else(|| format!("engine spec `{text}`: cmd=PATH is required"))?;
        let name = name.unwrap_or_else(|| {
            cmd.file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| "engine".into())
        });
        Ok(Self {
            name,
            cmd,
            args,
            dir,
            env,
            turn_ms,
            match_ms,
            max_node,
        })
    }

    /// Checks that the program exists and is executable and that `dir` is a directory; resolves a
    /// bare command name through PATH. A relative `cmd` with a slash is taken relative to `dir`
    /// when it exists there (the way Gomocup managers start an engine inside its folder),
    /// otherwise relative to the manager's directory, and made absolute either way.
    pub fn resolve(mut self) -> Result<Self, String> {
        if let Some(dir) = &self.dir
            && !dir.is_dir()
        {
            return Err(format!(
                "engine `{}`: dir `{}` is not a directory",
                self.name,
                dir.display()
            ));
        }
        let has_slash = self.cmd.components().count() > 1 || self.cmd.is_absolute();
        let found = if has_slash {
            let in_dir = self
                .dir
                .as_ref()
                .map(|d| d.join(&self.cmd))
                .filter(|p| is_executable(p));
            in_dir.or_else(|| Some(self.cmd.clone()).filter(|p| is_executable(p)))
        } else {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join(&self.cmd))
                    .find(|p| is_executable(p))
            })
        };
        let found = found.ok_or_else(|| {
            format!(
                "engine `{}`: program `{}` not found or not executable",
                self.name,
                self.cmd.display()
            )
        })?;
        self.cmd = std::path::absolute(&found).unwrap_or(found);
        Ok(self)
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Makes display names unique in input order: a second `fz` becomes `fz#2`.
pub fn uniquify_names(specs: &mut [EngineSpec]) {
    let mut seen: Vec<String> = Vec::new();
    for s in specs.iter_mut() {
        let base = s.name.clone();
        let mut k = 1;
        while seen.contains(&s.name) {
            k += 1;
            s.name = format!("{base}#{k}");
        }
        seen.push(s.name.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_all_keys() {
        let s = EngineSpec::parse("cmd=/bin/echo,name=e,arg=-n,arg=x,dir=/tmp,env=A=b=c").unwrap();
        assert_eq!(s.name, "e");
        assert_eq!(s.args, vec!["-n", "x"]);
        assert_eq!(s.dir, Some(PathBuf::from("/tmp")));
        assert_eq!(s.env, vec![("A".to_string(), "b=c".to_string())]);
        assert_eq!((s.turn_ms, s.match_ms), (None, None));
        let odds = EngineSpec::parse("cmd=/bin/echo,turn_ms=500,match_ms=30000").unwrap();
        assert_eq!((odds.turn_ms, odds.match_ms), (Some(500), Some(30000)));
        assert_eq!(odds.max_node, None);
        let fixed = EngineSpec::parse("cmd=/bin/echo,max_node=400").unwrap();
        assert_eq!(fixed.max_node, Some(400));
        assert_eq!(
            EngineSpec::parse("cmd=/usr/bin/pbrain-x").unwrap().name,
            "pbrain-x"
        );
    }

    #[test]
    fn rejects_bad_specs() {
        assert!(EngineSpec::parse("name=x").is_err());
        assert!(EngineSpec::parse("cmd=/bin/true,foo=1").is_err());
        assert!(EngineSpec::parse("cmd=/bin/true,oops").is_err());
        for bad in [
            "turn_ms=0",
            "turn_ms=-5",
            "turn_ms=1.5",
            "match_ms=",
            "match_ms=x",
        ] {
            let e = EngineSpec::parse(&format!("cmd=/bin/true,{bad}")).unwrap_err();
            assert!(e.contains("milliseconds"), "{bad}: {e}");
        }
        for bad in ["max_node=0", "max_node=-1", "max_node=1e3", "max_node="] {
            let e = EngineSpec::parse(&format!("cmd=/bin/true,{bad}")).unwrap_err();
            assert!(e.contains("whole number of nodes"), "{bad}: {e}");
        }
        let missing = EngineSpec::parse("cmd=/nonexistent/pbrain-none")
            .unwrap()
            .resolve();
        assert!(missing.unwrap_err().contains("not found"));
        assert!(
            EngineSpec::parse("cmd=sh")
                .unwrap()
                .resolve()
                .unwrap()
                .cmd
                .is_absolute()
        );
    }

    #[test]
    fn names_are_made_unique() {
        let mut v = vec![
            EngineSpec::parse("cmd=a").unwrap(),
            EngineSpec::parse("cmd=a").unwrap(),
        ];
        uniquify_names(&mut v);
        assert_eq!(v[1].name, "a#2");
    }
}
