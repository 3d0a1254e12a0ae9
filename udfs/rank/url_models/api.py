"""The URL-model interface every backend implements (García-Romero et al.'s two tasks):

    model.predict_lang(urls) -> pd.DataFrame      # url2lang: ISO 639-3 columns + 'unk', rows sum to 1
    model.predict_parallel(src, trg) -> ndarray   # pairs: P(parallel) per pair (calibrated when recorded)

`UrlModel` is the protocol callers type against; `UrlModelApi` is the base class the n-gram and
transformer backends extend: it checks arguments once and calls the backend's
`_lang_probabilities` / `_pair_probabilities`. No torch here, so importing the interface is light.
"""
from __future__ import annotations

from typing import Protocol

import numpy as np
import pandas as pd


class UrlModel(Protocol):
    """What every backend offers."""

    backend: str
    task: str
    labels: list[str]
    metadata: dict

    def predict_lang(self, urls: list[str]) -> pd.DataFrame: ...

    def predict_parallel(self, src_urls: list[str], trg_urls: list[str]) -> np.ndarray: ...


class UrlModelApi:
    """What both URL-model backends answer: predict_lang / predict_parallel check their arguments here and
    score with the backend's `_lang_probabilities(urls)` / `_pair_probabilities(src, trg)` (class
    probabilities, one row per URL or pair)."""

    task: str
    labels: list[str]

    def predict_lang(self, urls: list[str]) -> pd.DataFrame:
        """P(language | URL): one row per URL, columns = ISO 639-3 labels + 'unk', rows sum to 1."""
        if self.task != "url2lang":
            raise TypeError(f"this is a {self.task} model; predict_lang needs a url2lang model")
        return language_frame(self._lang_probabilities(list(urls)), self.labels)

    def predict_parallel(self, src_urls: list[str], trg_urls: list[str]) -> np.ndarray:
        """P(src and trg are translations of each other), one float per pair; calibrated when the model
        directory records a calibration (parascout_model.json `calibration`, models trained since it exists)."""
        if self.task != "pairs":
            raise TypeError(f"this is a {self.task} model; predict_parallel needs a pairs model")
        src_urls, trg_urls = list(src_urls), list(trg_urls)
        if len(src_urls) != len(trg_urls):
            raise ValueError(f"predict_parallel: {len(src_urls)} src URLs but {len(trg_urls)} trg URLs")
        if not src_urls:
            return np.zeros(0)
        calibration = self.metadata.get("calibration")
        if calibration:
            from parascout.udfs.rank.url_models.calibration import calibrated

            return calibrated(self.pair_logits(src_urls, trg_urls), calibration)
        return self._pair_probabilities(src_urls, trg_urls)[:, 1].astype(np.float64)

    def pair_logits(self, src_urls: list[str], trg_urls: list[str]) -> np.ndarray:
        """log P(parallel) - log P(not parallel) of the uncalibrated network, one float per pair."""
        probabilities = np.maximum(self._pair_probabilities(list(src_urls), list(trg_urls)), 1e-300)
        return np.log(probabilities[:, 1]) - np.log(probabilities[:, 0])

    def _lang_probabilities(self, urls: list[str]) -> np.ndarray:
        raise NotImplementedError

    def _pair_probabilities(self, src_urls: list[str], trg_urls: list[str]) -> np.ndarray:
        raise NotImplementedError


def language_frame(probabilities: np.ndarray, labels: list[str]) -> pd.DataFrame:
    """A predict_lang frame: the label columns plus 'unk' (zero when the model has no such class)."""
    frame = pd.DataFrame(probabilities.astype(np.float64), columns=list(labels))
    if "unk" not in frame.columns:
        frame["unk"] = 0.0
    return frame
