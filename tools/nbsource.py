"""Shared by the notebook generators: stable cell ids and the pairlab kernelspec."""
import textwrap

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


# The active-learning settings notebooks 03-05 share. The same values select the same run
# folders, so notebooks 04 and 05 read back the runs notebook 03 finished; one definition keeps
# the three parameter cells from drifting apart.
AL_PARAMETERS = '''fractions = [0.5, 0.25, 0.25]     # QQP train/dev/test shares of questions
al_max_items = {"qqp": {"train": 1000, "dev": 500, "test": 500},
                "wikiqa": {"train": 100, "dev": 126, "test": 100}}  # left items per split (None: all)
model = None                      # sentence-transformers name or path (None: offline all-MiniLM-L6-v2)
max_seq_length = 128              # word pieces per input
n1 = 32                           # seed-set size; round i labels n1 * growth^(i-1) pairs
rounds = {"qqp": 3, "wikiqa": 3}  # k (the paper: 10 on QQP, 4 on WikiQA)
growth = 1.5
al_neighbours = 50                # m: candidate neighbours per item in each round (paper: 1000 / 100)
cosine_epochs = 2                 # CosineBERT epochs per round (a fresh model each round)
learning_rate = 2e-5
batch_size = 16
curve = False                     # also train non-adaptive strategies every round (for their curves)
neighbours = 50                   # evaluation D_near: pretrained neighbours per dev/test item
al_n_random = 200_000             # evaluation |D_rand| (scored from embeddings: cheap)
al_n_boot = 200                   # bootstrap replicates for every interval
'''
AL_KEYS = ("fractions al_max_items model max_seq_length n1 rounds growth al_neighbours cosine_epochs "
           "learning_rate batch_size curve neighbours al_n_random al_n_boot")
OUTPUT_PARAMETERS = '''data_dir = None                   # None: $PAIRLAB_DATA_DIR, else ./data
run_dir = "runs/interactive"      # metrics, config and the run folders land here
figures_dir = "figures/interactive"
'''


def al_parameters(head: str, own: str = ""):
    """The ``parameters`` cell of an active-learning notebook: its own leading parameters, the
    shared settings, its own further parameters, then where outputs go."""
    return code(head + AL_PARAMETERS + own + OUTPUT_PARAMETERS, metadata={"tags": ["parameters"]})


def al_setup(notebook: str, keys: str, *, prepare: bool = True) -> str:
    """The code that records the config, builds the loop's settings and (``prepare``) the pools
    and evaluation strata of every task."""
    names = "".join(f'\n    "{line} "' for line in textwrap.wrap(f"{keys} {AL_KEYS}", 88))
    text = f'''config = {{k: v for k, v in dict(globals()).items() if k in ({names}).split()}}
ctx = setup("{notebook}", run_dir=run_dir, figures_dir=figures_dir, params=config)
settings = dict(n1=n1, rounds=rounds, growth=growth, neighbours=al_neighbours, model=model,
                epochs=cosine_epochs, learning_rate=learning_rate, batch_size=batch_size,
                max_seq_length=max_seq_length, n_boot=al_n_boot, curve=curve)'''
    return text + ("\n" + AL_PREPARE if prepare else "")


AL_PREPARE = '''tasks = data.load_tasks(dataset, data_dir, seed=seed, fractions=fractions, max_items=al_max_items)
prepared = {name: experiments.prepare(task, EvalConfig(neighbours, al_n_random, seed), model=model,
                                      max_seq_length=max_seq_length) for name, task in tasks.items()}
experiments.scale(prepared, settings, paper.BUDGET)'''
