"""Shared by the notebook generators: stable cell ids and the pairlab kernelspec."""
import nbformat as nbf

md, code = nbf.v4.new_markdown_cell, nbf.v4.new_code_cell


def write(cells, path: str) -> None:
    """Write ``cells`` as a notebook on the ``pairlab`` kernel, with ids that stay the same
    from one generation to the next (a clean diff)."""
    for number, cell in enumerate(cells):
        cell["id"] = f"cell-{number:02d}"
    nb = nbf.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "pairlab", "display_name": "Python (pairlab)",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbf.write(nb, path)
