# A chart that comes back as an image: the figure left open at the end is
# captured as PNG (matplotlib's Agg backend), as a notebook shows it.
import matplotlib.pyplot as plt

sales = {"East": 1750, "West": 900}
fig, ax = plt.subplots(figsize=(4, 3))
ax.bar(list(sales), list(sales.values()), color=["tab:blue", "tab:orange"])
ax.set_title("sales by region")
sum(sales.values())
