"""A two-slide PowerPoint deck drawn by the model's JavaScript with
pptxgenjs, written by the host to deck.pptx. Run from the repository root
after `npm ci --prefix tests/libs` (the pinned pptxgenjs):

    python3 examples/deck.py [OUT_DIR] [NODE_MODULES]    (OUT_DIR is made when missing)
"""
import os
import sys

from codecage import WEB_POLYFILLS, IsolatedRuntime

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
NODE_MODULES = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "tests", "libs",
                                                                  "node_modules")

MODEL_JS = """
const deck = new PptxGenJS();
deck.addSlide().addText('Quarterly sales', {x: 1, y: 1, fontSize: 36});
const s = deck.addSlide();
s.addText('By region', {x: 0.5, y: 0.3, fontSize: 24});
s.addChart(deck.ChartType.bar, [{name: 'Sales', labels: ['East', 'West', 'North'],
                                 values: [1750, 900, 1200]}], {x: 1, y: 1, w: 8, h: 4});
await deck.write({outputType: 'uint8array'});
"""


def main():
    os.makedirs(OUT, exist_ok=True)  # before the sandboxes run: a bad OUT fails first
    bundle = os.path.join(NODE_MODULES, "pptxgenjs", "dist", "pptxgen.bundle.js")
    with IsolatedRuntime(bootstrap=WEB_POLYFILLS, libraries=[bundle], timeout=60) as js:
        data = js.eval(MODEL_JS)
    path = os.path.join(OUT, "deck.pptx")
    with open(path, "wb") as f:
        f.write(data)
    print(f"wrote {path} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
