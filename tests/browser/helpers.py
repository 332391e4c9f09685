"""What the browser tests share: the script that measures a drawn graph in the page."""

from __future__ import annotations

GEOMETRY = """svg => {
    const inside = (b, p, slack) => p.x > b.x - slack && p.x < b.x + b.width + slack
        && p.y > b.y - slack && p.y < b.y + b.height + slack;
    const onScreen = (element, p) => new DOMPoint(p.x, p.y).matrixTransform(
        element.getScreenCTM());
    const boxes = [...svg.querySelectorAll("g.node")].map(g => [
        g.dataset.key, g.querySelector("rect").getBoundingClientRect()]);
    const crossings = [];
    let points = 0;
    for (const path of svg.querySelectorAll("path.edge")) {
        const length = path.getTotalLength();
        const scale = path.getScreenCTM().a;
        const first = onScreen(path, path.getPointAtLength(0));
        const last = onScreen(path, path.getPointAtLength(length));
        const ends = boxes.filter(([, b]) => inside(b, first, 1) || inside(b, last, 1))
            .map(([key]) => key);
        for (let at = 0; at <= length; at += 2 / Math.max(scale, 1)) {
            const point = onScreen(path, path.getPointAtLength(at));
            points += 1;
            for (const [key, b] of boxes) {
                if (!ends.includes(key) && inside(b, point, -1)) {
                    crossings.push([path.dataset.source, path.dataset.target, key]);
                }
            }
        }
    }
    const misfits = [];
    for (const g of svg.querySelectorAll("g.node")) {
        const box = g.querySelector("rect").getBBox();
        for (const line of g.querySelectorAll("text")) {
            const right = line.getBBox().x + line.getComputedTextLength();
            if (right > box.x + box.width - 2) misfits.push(line.textContent);
        }
    }
    return {edges: svg.querySelectorAll("path.edge").length, points,
            crossings: crossings.slice(0, 20), crossed: crossings.length, misfits};
}"""
"""Every edge sampled every 2 px along its length as Chromium draws it on the screen (after any
zoom and pan), each point checked against every box on the screen but the two its ends lie
on; every label's drawn width against its box."""
