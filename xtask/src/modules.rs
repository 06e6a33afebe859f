//! Reads a crate's module tree from its sources (with `syn`) and resolves every path a module
//! writes to the module that defines what the path names.
//!
//! A module is a file or an inline `mod`. An edge `a → b` means code in `a` names an item defined
//! in `b` (through `use`, a path in code or types, a path inside a macro's tokens, or a path in an
//! attribute string such as `#[schemars(with = "super::ids::EventId")]`). Re-exports are followed
//! to the module that defines the item; a `use` that only names a module is no edge (the paths
//! through it are), a glob `use m::*` is an edge to `m`. The `mod` declaration that makes `b` a
//! child of `a` is no edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

use crate::graph::Graph;

/// Why a crate's sources could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A file could not be read.
    #[error("reading {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file is not valid Rust.
    #[error("parsing {path}: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: syn::Error,
    },
    /// A `mod name;` whose file is missing.
    #[error("{declared_in}: no file for `mod {name};`")]
    MissingModule {
        /// The file declaring it.
        declared_in: PathBuf,
        /// The module's name.
        name: String,
    },
}

#[derive(Debug, Default)]
struct Module {
    name: String,
    parent: Option<usize>,
    children: BTreeMap<String, usize>,
    items: BTreeSet<String>,
    imports: BTreeMap<String, Vec<String>>,
    globs: Vec<Vec<String>>,
    /// Paths written in this module, with a one-line rendering of each.
    refs: Vec<Vec<String>>,
    /// The file this module is written in (an index into [`CrateModules::files`]).
    file: usize,
}

/// The module tree of one crate (a library or a binary target).
#[derive(Debug)]
pub struct CrateModules {
    modules: Vec<Module>,
    /// The crate's source files, the root first.
    files: Vec<PathBuf>,
    /// `#[macro_export]` macros (named at the crate root) and the module defining each.
    exported_macros: BTreeMap<String, usize>,
}

/// Where a path lands.
enum Landing {
    /// On an item defined in this module.
    Item(usize),
    /// On the module itself.
    Module(usize),
}

impl CrateModules {
    /// Reads the crate whose root file is `root` (`src/lib.rs`, `src/main.rs`, …), named `name`.
    pub fn read(name: &str, root: &Path) -> Result<Self, ReadError> {
        let mut this = Self {
            modules: vec![Module {
                name: name.to_string(),
                ..Module::default()
            }],
            files: vec![root.to_path_buf()],
            exported_macros: BTreeMap::new(),
        };
        let dir = root.parent().unwrap_or(Path::new(".")).to_path_buf();
        let file = parse(root)?;
        this.collect(0, &file.items, &dir, root)?;
        Ok(this)
    }

    /// Adds this crate's modules and edges to `graph`.
    pub fn add_to(&self, graph: &mut Graph) {
        let ids: Vec<usize> = (0..self.modules.len())
            .map(|m| graph.node(&self.display(m)))
            .collect();
        for (m, module) in self.modules.iter().enumerate() {
            for path in &module.refs {
                let landing = self.resolve(m, path, 0, None);
                let target = match landing {
                    Some(Landing::Item(t)) => t,
                    Some(Landing::Module(t)) if path.last().is_some_and(|s| s == "*") => t,
                    _ => continue,
                };
                graph.edge(ids[m], ids[target], &path.join("::"));
            }
        }
    }

    fn display(&self, mut m: usize) -> String {
        let mut parts = vec![self.modules[m].name.clone()];
        while let Some(p) = self.modules[m].parent {
            parts.push(self.modules[p].name.clone());
            m = p;
        }
        parts.reverse();
        parts.join("::")
    }

    /// The crate's source files (the root first).
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Adds this crate's file graph to `graph`, each file named by `name_of`: an edge `a → b`
    /// means a path written in file `a` stops in file `b`, on an item `b` defines or on a name
    /// `b` imports (a re-export). A path through a `mod.rs` that re-exports the name is an edge
    /// to that `mod.rs` (whose own `use` is its edge onward); walking through modules that only
    /// declare children is none. Inline modules belong to their file.
    pub fn add_files_to(&self, graph: &mut Graph, name_of: impl Fn(&Path) -> String) {
        let ids: Vec<usize> = self.files.iter().map(|f| graph.node(&name_of(f))).collect();
        for (m, module) in self.modules.iter().enumerate() {
            for path in &module.refs {
                let landing = self.resolve(m, path, 0, Some(module.file));
                let target = match landing {
                    Some(Landing::Item(t)) => t,
                    Some(Landing::Module(t)) if path.last().is_some_and(|s| s == "*") => t,
                    _ => continue,
                };
                graph.edge(
                    ids[module.file],
                    ids[self.modules[target].file],
                    &path.join("::"),
                );
            }
        }
    }

    fn child(&mut self, parent: usize, name: &str) -> usize {
        let id = self.modules.len();
        self.modules.push(Module {
            name: name.to_string(),
            parent: Some(parent),
            file: self.modules[parent].file,
            ..Module::default()
        });
        self.modules[parent].children.insert(name.to_string(), id);
        id
    }

    /// Collects `items` into module `m`, whose child module files live in `dir`.
    fn collect(
        &mut self,
        m: usize,
        items: &[syn::Item],
        dir: &Path,
        file: &Path,
    ) -> Result<(), ReadError> {
        for item in items {
            match item {
                syn::Item::Mod(module) => {
                    let name = module.ident.to_string();
                    let child = self.child(m, &name);
                    let mut paths = Paths::default();
                    for attr in &module.attrs {
                        paths.visit_attribute(attr);
                    }
                    self.absorb(m, paths);
                    let child_dir = dir.join(&name);
                    if let Some((_, content)) = &module.content {
                        self.collect(child, content, &child_dir, file)?;
                    } else {
                        let candidates = [dir.join(format!("{name}.rs")), child_dir.join("mod.rs")];
                        let Some(path) = candidates.iter().find(|p| p.is_file()) else {
                            return Err(ReadError::MissingModule {
                                declared_in: file.to_path_buf(),
                                name,
                            });
                        };
                        let parsed = parse(path)?;
                        self.modules[child].file = self.files.len();
                        self.files.push(path.clone());
                        self.collect(child, &parsed.items, &child_dir, path)?;
                    }
                }
                syn::Item::Use(u) => {
                    let mut paths = Paths::default();
                    paths.visit_item_use(u);
                    self.absorb(m, paths);
                }
                other => {
                    if let syn::Item::Macro(mac) = other
                        && let Some(name) = &mac.ident
                        && mac.attrs.iter().any(|a| a.path().is_ident("macro_export"))
                    {
                        self.exported_macros.insert(name.to_string(), m);
                    }
                    if let Some(name) = item_name(other) {
                        self.modules[m].items.insert(name);
                    }
                    let mut paths = Paths {
                        macro_rules: matches!(other, syn::Item::Macro(m) if m.ident.is_some()),
                        ..Paths::default()
                    };
                    paths.visit_item(other);
                    self.absorb(m, paths);
                }
            }
        }
        Ok(())
    }

    fn absorb(&mut self, m: usize, paths: Paths) {
        let module = &mut self.modules[m];
        module.imports.extend(paths.imports);
        module.globs.extend(paths.globs);
        module.refs.extend(paths.refs);
    }

    fn root(&self, mut m: usize) -> usize {
        while let Some(p) = self.modules[m].parent {
            m = p;
        }
        m
    }

    /// Resolves `path` as written in module `m`. With `hop` (the writer's file), resolution
    /// stops at the first module of another file whose imports it consults: that file is where
    /// the path lands for the file graph.
    fn resolve(
        &self,
        m: usize,
        path: &[String],
        depth: usize,
        hop: Option<usize>,
    ) -> Option<Landing> {
        if depth > 24 || path.is_empty() {
            return None;
        }
        let first = path[0].as_str();
        match first {
            "crate" => self.walk(self.root(m), &path[1..], depth, hop),
            "self" => self.walk(m, &path[1..], depth, hop),
            "super" => {
                let mut at = m;
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    at = self.modules[at].parent?;
                    rest = &rest[1..];
                }
                self.walk(at, rest, depth, hop)
            }
            "Self" | "*" => None,
            name => {
                let module = &self.modules[m];
                if let Some(&child) = module.children.get(name) {
                    return self.walk(child, &path[1..], depth, hop);
                }
                if let Some(target) = module.imports.get(name) {
                    if hop.is_some_and(|f| f != module.file) {
                        return Some(Landing::Item(m));
                    }
                    let expanded: Vec<String> = target.iter().chain(&path[1..]).cloned().collect();
                    return self.resolve(m, &expanded, depth + 1, hop);
                }
                if module.items.contains(name) {
                    return None;
                }
                self.through_globs(m, path, depth, hop)
            }
        }
    }

    /// Resolves `path` through module `m`'s glob imports: only a glob whose module knows the
    /// path's first name (as a child, an item or an import) can bring it into scope.
    fn through_globs(
        &self,
        m: usize,
        path: &[String],
        depth: usize,
        hop: Option<usize>,
    ) -> Option<Landing> {
        let first = path.first()?;
        if hop.is_some_and(|f| f != self.modules[m].file) && !self.modules[m].globs.is_empty() {
            // A name another file brings into scope through its glob: that file is the hop, if
            // the glob knows the name.
            let known = self.through_globs(m, path, depth, None).is_some();
            return known.then_some(Landing::Item(m));
        }
        self.modules[m].globs.iter().find_map(|glob| {
            let Some(Landing::Module(t)) = self.resolve(m, glob, depth + 1, None) else {
                return None;
            };
            let module = &self.modules[t];
            let knows = module.children.contains_key(first)
                || module.items.contains(first)
                || module.imports.contains_key(first);
            if !knows || t == m {
                return None;
            }
            self.walk(t, path, depth + 1, hop)
        })
    }

    /// Walks `rest` down from module `at`.
    fn walk(
        &self,
        mut at: usize,
        rest: &[String],
        depth: usize,
        hop: Option<usize>,
    ) -> Option<Landing> {
        for (i, segment) in rest.iter().enumerate() {
            let module = &self.modules[at];
            if segment == "*" {
                return Some(Landing::Module(at));
            }
            if segment == "self" {
                continue;
            }
            if segment == "super" {
                at = module.parent?;
                continue;
            }
            if let Some(&child) = module.children.get(segment) {
                at = child;
                continue;
            }
            if module.items.contains(segment) {
                return Some(Landing::Item(at));
            }
            if let Some(target) = module.imports.get(segment) {
                if hop.is_some_and(|f| f != module.file) {
                    return Some(Landing::Item(at));
                }
                let expanded: Vec<String> = target.iter().chain(&rest[i + 1..]).cloned().collect();
                return self.resolve(at, &expanded, depth + 1, hop);
            }
            if let Some(landing) = self.through_globs(at, &rest[i..], depth, hop) {
                return Some(landing);
            }
            if module.parent.is_none()
                && let Some(&defining) = self.exported_macros.get(segment)
            {
                return Some(Landing::Item(defining));
            }
            // A name this reader does not know (a derive's item, say): it is in `at`.
            return Some(Landing::Item(at));
        }
        Some(Landing::Module(at))
    }
}

fn parse(path: &Path) -> Result<syn::File, ReadError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    syn::parse_file(&text).map_err(|source| ReadError::Parse {
        path: path.to_path_buf(),
        source,
    })
}

fn item_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Const(i) => &i.ident,
        syn::Item::Enum(i) => &i.ident,
        syn::Item::Fn(i) => &i.sig.ident,
        syn::Item::Macro(i) => i.ident.as_ref()?,
        syn::Item::Static(i) => &i.ident,
        syn::Item::Struct(i) => &i.ident,
        syn::Item::Trait(i) => &i.ident,
        syn::Item::TraitAlias(i) => &i.ident,
        syn::Item::Type(i) => &i.ident,
        syn::Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

/// The paths one item writes: its `use` imports (also those inside function bodies), its
/// multi-segment paths, and the paths inside macro tokens and attribute strings.
#[derive(Default)]
struct Paths {
    imports: BTreeMap<String, Vec<String>>,
    globs: Vec<Vec<String>>,
    refs: Vec<Vec<String>>,
    /// Inside a `macro_rules!` body: `super::`/`self::` there are resolved where the macro is
    /// used, so they are not this module's edges (`$crate::` paths are).
    macro_rules: bool,
}

impl Paths {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                let mut full = prefix.clone();
                let local = if name == "self" {
                    prefix.last().cloned().unwrap_or_default()
                } else {
                    full.push(name.clone());
                    name
                };
                if local != "_" {
                    self.imports.insert(local, full.clone());
                }
                self.refs.push(full);
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                if r.ident != "self" {
                    full.push(r.ident.to_string());
                }
                let local = r.rename.to_string();
                if local != "_" {
                    self.imports.insert(local, full.clone());
                }
                self.refs.push(full);
            }
            syn::UseTree::Glob(_) => {
                self.globs.push(prefix.clone());
                let mut full = prefix.clone();
                full.push("*".to_string());
                self.refs.push(full);
            }
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }

    /// Every `a::b…` chain in `tokens` (not one after a leading `::`), at any depth.
    fn tokens(&mut self, tokens: TokenStream) {
        let list: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < list.len() {
            match &list[i] {
                TokenTree::Group(g) => {
                    self.tokens(g.stream());
                    i += 1;
                }
                TokenTree::Ident(first) => {
                    let after_colons = i >= 2 && is_colon(&list[i - 1]) && is_colon(&list[i - 2]);
                    let mut chain = vec![first.to_string()];
                    let mut j = i + 1;
                    while j + 2 < list.len()
                        && is_colon(&list[j])
                        && is_colon(&list[j + 1])
                        && matches!(list[j + 2], TokenTree::Ident(_))
                    {
                        chain.push(list[j + 2].to_string());
                        j += 3;
                    }
                    let relative = chain[0] == "super" || chain[0] == "self";
                    if !after_colons && chain.len() > 1 && !(self.macro_rules && relative) {
                        self.refs.push(chain);
                    }
                    i = j;
                }
                TokenTree::Literal(lit) => {
                    self.path_in_string(&lit.to_string());
                    i += 1;
                }
                TokenTree::Punct(_) => i += 1,
            }
        }
    }

    /// A string literal that is a path (as in `with = "super::ids::EventId"`).
    fn path_in_string(&mut self, literal: &str) {
        let Some(inner) = literal.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else {
            return;
        };
        if !(inner.starts_with("crate::")
            || inner.starts_with("super::")
            || inner.starts_with("self::"))
        {
            return;
        }
        if let Ok(path) = syn::parse_str::<syn::Path>(inner) {
            self.refs
                .push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        }
    }
}

fn is_colon(t: &TokenTree) -> bool {
    matches!(t, TokenTree::Punct(p) if p.as_char() == ':')
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if u.leading_colon.is_none() {
            self.use_tree(&mut Vec::new(), &u.tree);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() && path.segments.len() > 1 {
            self.refs
                .push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.tokens(mac.tokens.clone());
    }

    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        if attr.path().is_ident("doc") {
            return;
        }
        if let syn::Meta::List(list) = &attr.meta {
            self.tokens(list.tokens.clone());
        }
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {
        // A module inside a function body: not part of the tree this reader builds.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crate of three files in a fresh temporary folder; `a.rs` names `Thing` as `thing_path`.
    fn crate_with(thing_path: &str) -> (PathBuf, Graph, Graph) {
        let dir = std::env::temp_dir().join(format!(
            "xtask-files-{}-{}",
            std::process::id(),
            thing_path.replace("::", "-")
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("lib.rs"),
            "mod a;\nmod b;\npub use b::Thing;\npub fn run() { a::go() }\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("a.rs"),
            format!("use {thing_path};\npub fn go() {{ let _ = Thing; }}\n"),
        )
        .unwrap();
        std::fs::write(dir.join("b.rs"), "pub struct Thing;\n").unwrap();
        let modules = CrateModules::read("toy", &dir.join("lib.rs")).unwrap();
        let (mut by_module, mut by_file) = (Graph::default(), Graph::default());
        modules.add_to(&mut by_module);
        modules.add_files_to(&mut by_file, |f| {
            f.file_name().unwrap().to_string_lossy().to_string()
        });
        (dir, by_module, by_file)
    }

    #[test]
    fn a_name_imported_through_a_re_exporting_file_that_imports_back_is_a_file_cycle() {
        let (dir, by_module, by_file) = crate_with("crate::Thing");
        assert!(by_module.cycles().is_empty(), "modules resolve to b");
        let cycles = by_file.cycles();
        assert_eq!(cycles.len(), 1);
        assert_eq!(cycles[0].members, ["a.rs", "lib.rs"]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_name_imported_from_its_defining_file_is_no_file_cycle() {
        let (dir, _, by_file) = crate_with("crate::b::Thing");
        assert!(by_file.cycles().is_empty());
        assert!(by_file.edges().any(|(f, t, _)| f == "a.rs" && t == "b.rs"));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
