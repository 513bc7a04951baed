"""Training collections: selecting documents for learning to rank (kanoulas thesis chapter 4),
rankers trained on the selected sets, and the choice of training measure under incomplete
judgments (He, Macdonald and Ounis 2008).

Modules: `select` (selection methods and the selected sets' characteristics), `rankers`
(RankSVM-style, RankNet, regression, LambdaMART), `learn` (cross-validation over queries,
evaluation with the engine's measures), `sensitivity` (training-measure sensitivity).
"""
