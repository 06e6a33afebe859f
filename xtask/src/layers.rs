//! Declared layers of a folder and the imports that run against them: a layer imports only
//! from the layers below it (or itself); an import from a lower layer to a higher one is
//! "upward".

use crate::graph::Graph;

/// A folder's layers, top to bottom: each entry is a path prefix (a folder ending in `/`, or
/// one file) and the layer's name. A file belongs to the entry with the longest matching prefix.
#[derive(Debug, Clone, Copy)]
pub struct Layers {
    /// The folder the table covers (every file under it must belong to a layer).
    pub folder: &'static str,
    /// `(prefix, layer name)`, top to bottom.
    pub table: &'static [(&'static str, &'static str)],
}

/// The runtime's surface W: HTTP → services → the engine and node kinds → infrastructure. The
/// surface's `mod.rs` (declarations and the re-exports the composition root uses) sits on top.
pub const SURFACE_W: Layers = Layers {
    folder: "reference-runtime/src/openwop/",
    table: &[
        ("reference-runtime/src/openwop/mod.rs", "surface"),
        ("reference-runtime/src/openwop/http/", "http"),
        ("reference-runtime/src/openwop/services/", "services"),
        ("reference-runtime/src/openwop/engine/", "engine"),
        ("reference-runtime/src/openwop/infra/", "infra"),
    ],
};

/// One import between two files of a layered folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The importing file.
    pub from: String,
    /// The imported file.
    pub to: String,
    /// One path that makes the import.
    pub why: String,
}

impl Layers {
    /// The rank of `file` (0 = top), or `None` when no entry covers it.
    pub fn rank(&self, file: &str) -> Option<usize> {
        self.table
            .iter()
            .enumerate()
            .filter(|(_, (prefix, _))| file.starts_with(prefix))
            .max_by_key(|(_, (prefix, _))| prefix.len())
            .map(|(rank, _)| rank)
    }

    /// The files of `graph` under [`Layers::folder`] that no entry covers.
    pub fn unassigned<'g>(&self, graph: &'g Graph) -> Vec<&'g str> {
        graph
            .names()
            .iter()
            .map(String::as_str)
            .filter(|f| f.starts_with(self.folder) && self.rank(f).is_none())
            .collect()
    }

    /// Every import of `graph` between two files under [`Layers::folder`].
    pub fn imports(&self, graph: &Graph) -> Vec<Import> {
        graph
            .edges()
            .filter(|(from, to, _)| from.starts_with(self.folder) && to.starts_with(self.folder))
            .map(|(from, to, why)| Import {
                from: from.to_string(),
                to: to.to_string(),
                why: why.to_string(),
            })
            .collect()
    }

    /// The imports from a lower layer to a higher one.
    pub fn upward(&self, graph: &Graph) -> Vec<Import> {
        self.imports(graph)
            .into_iter()
            .filter(|i| match (self.rank(&i.from), self.rank(&i.to)) {
                (Some(from), Some(to)) => to < from,
                _ => false,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOY: Layers = Layers {
        folder: "src/",
        table: &[
            ("src/top/", "top"),
            ("src/low/x.rs", "mid"),
            ("src/low/", "low"),
        ],
    };

    fn graph(edges: &[(&str, &str)]) -> Graph {
        let mut g = Graph::default();
        for (a, b) in edges {
            let (a, b) = (g.node(a), g.node(b));
            g.edge(a, b, "test");
        }
        g
    }

    #[test]
    fn an_import_from_a_lower_layer_to_a_higher_one_is_upward() {
        let g = graph(&[
            ("src/top/a.rs", "src/low/b.rs"),
            ("src/low/b.rs", "src/top/a.rs"),
            ("src/low/b.rs", "src/low/c.rs"),
            ("src/low/c.rs", "src/low/x.rs"),
            ("src/top/a.rs", "elsewhere.rs"),
        ]);
        let upward: Vec<(String, String)> =
            TOY.upward(&g).into_iter().map(|i| (i.from, i.to)).collect();
        assert_eq!(
            upward,
            [
                ("src/low/b.rs".to_string(), "src/top/a.rs".to_string()),
                ("src/low/c.rs".to_string(), "src/low/x.rs".to_string()),
            ]
        );
        assert_eq!(TOY.imports(&g).len(), 4);
    }

    #[test]
    fn a_file_no_entry_covers_is_reported() {
        let g = graph(&[("src/top/a.rs", "src/stray.rs")]);
        assert_eq!(TOY.unassigned(&g), ["src/stray.rs"]);
    }
}
