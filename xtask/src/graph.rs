//! A directed graph of named nodes and its strongly connected components (Tarjan's algorithm).

use std::collections::{BTreeMap, BTreeSet};

/// A directed graph whose nodes are named; each edge keeps one example of why it exists.
#[derive(Debug, Default, Clone)]
pub struct Graph {
    names: Vec<String>,
    index: BTreeMap<String, usize>,
    edges: BTreeMap<usize, BTreeMap<usize, String>>,
}

/// A set of nodes that all reach each other: an import cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle {
    /// The members' names, sorted.
    pub members: Vec<String>,
    /// The edges between members: `(from, to, why)`, sorted.
    pub edges: Vec<(String, String, String)>,
}

impl Graph {
    /// The id of the node named `name`, added if new.
    pub fn node(&mut self, name: &str) -> usize {
        if let Some(&id) = self.index.get(name) {
            return id;
        }
        let id = self.names.len();
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), id);
        id
    }

    /// Adds the edge `from → to` (a node's edge to itself is not kept); the first `why` is kept.
    pub fn edge(&mut self, from: usize, to: usize, why: &str) {
        if from != to {
            self.edges
                .entry(from)
                .or_default()
                .entry(to)
                .or_insert_with(|| why.to_string());
        }
    }

    /// The number of nodes.
    pub fn node_count(&self) -> usize {
        self.names.len()
    }

    /// The number of edges.
    pub fn edge_count(&self) -> usize {
        self.edges.values().map(BTreeMap::len).sum()
    }

    /// Every edge as `(from, to, why)`, in node order.
    pub fn edges(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.edges.iter().flat_map(move |(&from, targets)| {
            targets.iter().map(move |(&to, why)| {
                (
                    self.names[from].as_str(),
                    self.names[to].as_str(),
                    why.as_str(),
                )
            })
        })
    }

    /// Every node's name, in the order added.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Every strongly connected component of more than one node, largest first.
    pub fn cycles(&self) -> Vec<Cycle> {
        let mut cycles: Vec<Cycle> = self
            .components()
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|members| {
                let set: BTreeSet<usize> = members.iter().copied().collect();
                let mut edges = Vec::new();
                for &from in &set {
                    for (to, why) in self.edges.get(&from).into_iter().flatten() {
                        if set.contains(to) {
                            edges.push((
                                self.names[from].clone(),
                                self.names[*to].clone(),
                                why.clone(),
                            ));
                        }
                    }
                }
                edges.sort();
                let mut members: Vec<String> = set.iter().map(|&i| self.names[i].clone()).collect();
                members.sort();
                Cycle { members, edges }
            })
            .collect();
        cycles.sort_by(|a, b| {
            b.members
                .len()
                .cmp(&a.members.len())
                .then(a.members.cmp(&b.members))
        });
        cycles
    }

    /// Tarjan's strongly connected components (iterative, so deep graphs do not overflow).
    fn components(&self) -> Vec<Vec<usize>> {
        let n = self.names.len();
        let successors: Vec<Vec<usize>> = (0..n)
            .map(|v| {
                self.edges
                    .get(&v)
                    .map(|m| m.keys().copied().collect())
                    .unwrap_or_default()
            })
            .collect();
        let mut index = vec![usize::MAX; n];
        let mut low = vec![0; n];
        let mut on_stack = vec![false; n];
        let mut stack = Vec::new();
        let mut next = 0;
        let mut out = Vec::new();
        for root in 0..n {
            if index[root] != usize::MAX {
                continue;
            }
            // (node, position in its successor list)
            let mut work = vec![(root, 0usize)];
            index[root] = next;
            low[root] = next;
            next += 1;
            stack.push(root);
            on_stack[root] = true;
            while let Some(&mut (v, ref mut pos)) = work.last_mut() {
                if let Some(&w) = successors[v].get(*pos) {
                    *pos += 1;
                    if index[w] == usize::MAX {
                        index[w] = next;
                        low[w] = next;
                        next += 1;
                        stack.push(w);
                        on_stack[w] = true;
                        work.push((w, 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(index[w]);
                    }
                    continue;
                }
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut component = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        component.push(w);
                        if w == v {
                            break;
                        }
                    }
                    out.push(component);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &str)]) -> Graph {
        let mut g = Graph::default();
        for (a, b) in edges {
            let (a, b) = (g.node(a), g.node(b));
            g.edge(a, b, "test");
        }
        g
    }

    #[test]
    fn an_acyclic_graph_has_no_cycle() {
        let g = graph(&[("a", "b"), ("b", "c"), ("a", "c"), ("d", "a")]);
        assert_eq!(g.cycles(), vec![]);
    }

    #[test]
    fn a_made_up_cycle_is_found_with_its_members_and_edges() {
        let g = graph(&[
            ("leaf", "x"),
            ("a", "b"),
            ("b", "c"),
            ("c", "a"),
            ("c", "leaf"),
            ("p", "q"),
            ("q", "p"),
        ]);
        let cycles = g.cycles();
        assert_eq!(cycles.len(), 2);
        assert_eq!(cycles[0].members, ["a", "b", "c"]);
        assert_eq!(
            cycles[0]
                .edges
                .iter()
                .map(|(f, t, _)| format!("{f}->{t}"))
                .collect::<Vec<_>>(),
            ["a->b", "b->c", "c->a"]
        );
        assert_eq!(cycles[1].members, ["p", "q"]);
    }

    #[test]
    fn a_self_reference_is_not_a_cycle() {
        let g = graph(&[("a", "a"), ("a", "b")]);
        assert_eq!(g.edge_count(), 1);
        assert!(g.cycles().is_empty());
    }
}
