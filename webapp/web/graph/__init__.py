"""The session tree as a Graphviz drawing: which nodes to draw, how each looks, and the SVG.

One job per module, each importing only those above it in this list:
- `text`: ids and one-line labels safe for HTML, SVG and dot (every string bound for dot goes
  through `dot_text`);
- `drawn`: the drawn tree of a file, cut into chains, with where each entry sits and per-chain
  figures, grown in place by appends;
- `layout`: folding and bounding (turns fold into segments, one drawing holds at most MAX_DRAWN
  nodes: side branches past it wait in "more branches" nodes);
- `direction`: the layout direction that shows the most at "Fit";
- `style`: each node's label, colours and link;
- `dot`: the DOT source and the `dot` run, with a time limit;
- `patch`: a drawing changed in place after an append, without `dot`.
Selection and overlays such as the context view are applied in the browser by CSS classes, so
the costly `dot` layout only depends on the file and on what is unfolded, and is cached on
exactly that. This module re-exports the public names the rest of the app uses; what a test
patches (the `dot` runner, its time limit, the drawn tree's maker) lives in its own module.
"""

from .direction import RANKDIRS, choose_rankdir, default_level, drawing_extent
from .dot import DotTimeout, Drawing, drawing_specs, render_drawing, render_svg, to_dot
from .drawn import drawn_tree
from .layout import LEVELS, MAX_DRAWN, MAX_EXPAND, GraphLayout, MoreBranches, Segment, build_layout
from .patch import patch_drawing
from .text import LABEL_WIDTH, css_token, dom_id, dot_text

__all__ = [
    "LABEL_WIDTH", "LEVELS", "MAX_DRAWN", "MAX_EXPAND", "RANKDIRS", "DotTimeout", "Drawing",
    "GraphLayout", "MoreBranches", "Segment", "build_layout", "choose_rankdir", "css_token", "default_level", "dom_id", "dot_text",
    "drawing_extent", "drawing_specs", "drawn_tree", "patch_drawing", "render_drawing", "render_svg", "to_dot",
]
