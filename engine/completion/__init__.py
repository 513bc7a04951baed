"""Completing biased judgments by predicting relevance (Buettcher, Clarke, Yeung and Soboroff, SIGIR 2007).

A classifier is trained per topic on the topic's judged documents and predicts the relevance of the
unjudged documents that runs retrieve within the pool depth; the predictions form one more judgment
source, used for evaluation only when asked for (hole filling), never silently.

- `text`: tokenization, the collection background and TF-IDF vectors.
- `kld`: the KLD classifier (paper section 3.1).
- `svm`: the linear SVM over TF-IDF vectors (section 3.2; scikit-learn, optional extra `predict`).
- `predict`: completion of a campaign's judgments, written as a named source.
- `expected`: expected P@k and AP from probabilities of relevance (the paper's future-work suggestion).
- `experiment`: classifier quality against the training fraction (Table 6) and the pool-bias
  experiments with completion (Tables 7 and 8).
"""
