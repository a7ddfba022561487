"""Deterministic archives for the benchmark: realistic blocks of about 2 KB.

Prose in French and English (accents, mixed case, typographic quotes and ligatures for
some writers), code with French comments, HTML with tags and entities, diffs and logs;
some blocks carry Greek or Cyrillic words, a few an emoji, some start with blank lines
or a first line longer than an excerpt; labels short, sometimes empty or accented.
Everything comes from one seeded ``random.Random``: the archive of size N is the first
N blocks of the same stream, so the sizes nest and one Go is filled step by step.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass

DEFAULT_SEED = 20261129
TARGET_CHARS = 2000


def _words(text: str) -> list[str]:
    return text.split()


# Vocabulary, written the way a writer without typographic habits types it
# (ASCII apostrophe, "oe"); a "typographic" block gets curly apostrophes (U+2019),
# œ, « », em dashes and ellipses instead.
_FR_COMMON = _words(
    "le la les un une des du de au aux et ou mais donc car avec sans pour par sur sous dans entre "
    "vers chez pendant après avant depuis encore déjà très plus moins bien aussi toujours jamais "
    "souvent parfois ici là où quand comme puis ensuite enfin il elle on nous vous ils qui que "
    "dont ce cette ces son sa ses leur notre votre"
)
_FR_WORDS = _words(
    "équipe serveur réunion décision problème réponse requête fichier dépôt branche mémoire "
    "archive résumé conversation utilisateur modèle paramètre fenêtre contexte étape tâche "
    "priorité échéance client facture commande livraison entrepôt stock référence numéro adresse "
    "téléphone courriel réseau sécurité accès clé jeton rapport analyse résultat mesure "
    "performance latence débit charge file message événement journal trace erreur avertissement "
    "correctif version évolution fonctionnalité interface écran bouton formulaire champ valeur "
    "élément liste tableau colonne ligne cellule données schéma index transaction verrou coeur "
    "noeud oeuvre soeur manoeuvre hôpital forêt île château août garçon hôtel théâtre Noël maïs "
    "ambiguïté façade leçon projet code test build"
)
_FR_VERBS = _words(
    "vérifie corrige déploie relance analyse compare archive résume envoie reçoit ajoute supprime "
    "modifie crée lit écrit teste valide refuse accepte bloque débloque migre configure surveille "
    "prévoit décide explique propose"
)
_EN_COMMON = _words(
    "the a an of to in on at for with without by from and or but so then when while after before "
    "since until again already very more less well also always never it we they this that these "
    "which who"
)
_EN_WORDS = _words(
    "team server meeting decision problem answer request file repository branch memory archive "
    "summary conversation user model parameter window context step task priority deadline customer "
    "invoice order delivery warehouse stock reference number address phone email network security "
    "access key token report analysis result measure performance latency throughput load queue "
    "message event log trace error warning patch version feature interface screen button form "
    "field value element list table column row cell data schema index transaction lock"
)
_EN_VERBS = _words(
    "checks fixes deploys restarts analyses compares archives summarises sends receives adds "
    "removes changes creates reads writes tests validates refuses accepts blocks unblocks migrates "
    "configures monitors plans decides explains"
)
_PROPER = _words(
    "Paris Lyon Montréal Genève Zürich Québec Besançon Orléans Nîmes Hélène Zoé Chloé Léa Jérôme "
    "Émile Éloïse Anaïs François Gaëlle Benoît Céline Alice Bob Carol Dave Kubernetes Docker "
    "GitHub Redis Kafka Nginx Linux"
)
# Words outside Latin-1: Greek and Cyrillic (upper and lower case), İ, Ÿ, €.
_WIDE = _words(
    "Αθήνα λόγος ΣΟΦΙΑ σύστημα ΔΙΑΚΟΜΙΣΤΗΣ Москва сервер ОШИБКА Журнал запрос İstanbul ŸVES 12€ ½ "
    "→ ✓"
)
_EMOJI = ("🚀", "🙂", "📦", "🔥", "✅")

# Topic words, which the queries look for: rarer than the rest, in varied case.
_TOPICS_FR = _words(
    "déploiement Déploiement DÉPLOIEMENT échec Échec PostgreSQL postgresql délai Délai sauvegarde"
)
_TOPICS_EN = _words("deployment Deployment timeout Timeout TIMEOUT PostgreSQL backup")
_FR = (_FR_COMMON, _FR_WORDS, _FR_VERBS, _TOPICS_FR)  # what a sentence is made of, by language
_EN = (_EN_COMMON, _EN_WORDS, _EN_VERBS, _TOPICS_EN)


def _typographic(text: str) -> str:
    """The text as a writer with typographic habits has it: curly quotes, œ, « », — and …."""
    for plain, typo in (("'", "\u2019"), ("oe", "œ"), ("Oe", "Œ"), (" - ", " — "), ("...", "…")):
        text = text.replace(plain, typo)
    return text.replace('"', "«", 1).replace('"', "»", 1)


@dataclass(frozen=True)
class Query:
    """A benchmark query: a name, the query text, an optional limit."""

    name: str
    text: str
    limit: int | None = None

    def args(self) -> str:
        """The tool call's arguments as a model writes them (JSON text, UTF-8 as is)."""
        limit = {} if self.limit is None else {"limit": self.limit}
        return json.dumps({"query": self.text, **limit}, ensure_ascii=False)


# Several terms each, with accents and upper case. "broad" has a stop word among
# its terms, as real queries do, and matches most French blocks; "narrow"
# matches about one block in ten.
QUERIES = (
    Query("broad", "Échec du DÉPLOIEMENT PostgreSQL : délai dépassé ?"),
    Query("narrow", "SAUVEGARDE nocturne Zürich backup", limit=10),
)
SESSION_QUERIES = (
    *QUERIES,
    Query("errors", "ERREUR réseau, latence — timeout ?"),
    Query("people", "Hélène Jérôme : facture et commande", limit=3),
    Query("infra", "Kubernetes Redis Kafka index transaction", limit=20),
    Query("wide", "Москва İstanbul ΣΟΦΙΑ journal → sécurité"),
)
"""Six different queries, one after the other in a session (``bench.session``): the two
above, then four more, among them one whose words beyond Latin-1 are no terms."""


@dataclass(frozen=True, slots=True)
class BlockSpec:
    """A block to archive."""

    label: str
    content: str


class _Generator:
    """The pools (built once from the seed) and the block stream."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.fr = [self._sentence(*_FR) for _ in range(4000)]
        self.en = [self._sentence(*_EN) for _ in range(3000)]
        self.code = [self._code_line() for _ in range(3000)]
        self.html = [self._html_line() for _ in range(3000)]

    def _sentence(
        self, common: list[str], words: list[str], verbs: list[str], topics: list[str]
    ) -> str:
        rng = self.rng
        out: list[str] = []
        for _ in range(rng.randint(2, 4)):
            out += rng.choices(common, k=rng.randint(1, 2))
            out += rng.choices(words, k=rng.randint(1, 3))
            if rng.random() < 0.5:
                out.append(rng.choice(verbs))
        r = rng.random()
        if r < 0.025:
            out.insert(rng.randrange(len(out) + 1), rng.choice(topics))
        elif r < 0.055:
            out.insert(rng.randrange(len(out) + 1), rng.choice(_PROPER))
        if common is _FR_COMMON and rng.random() < 0.3:
            out.insert(rng.randrange(len(out) + 1), "l'" + rng.choice(words))
        if rng.random() < 0.05:
            out.insert(rng.randrange(len(out) + 1), '"' + rng.choice(words) + '"')
        text = " ".join(out)
        return text[:1].upper() + text[1:] + rng.choice(("." * 6) + "?!:") + " "

    def _code_line(self) -> str:
        rng = self.rng
        name = rng.choice(_EN_WORDS) + rng.choice(("", "_id", "Count", "2"))
        kind = rng.random()
        if kind < 0.2:
            return f"func {name}(ctx context.Context, n int) error {{"
        if kind < 0.35:
            bound = rng.randint(1, 999)
            return f'\tif n > {bound} && ok {{ return fmt.Errorf("{name}: %w", err) }}'
        if kind < 0.5:
            return f"    if {name} is not None and len({name}) < {rng.randint(2, 64)}:"
        if kind < 0.6:
            return f'        raise ValueError(f"{{{name}!r}} <invalid> & rejected")'
        if kind < 0.75:
            return "    # " + rng.choice(self.fr).strip()  # French comments, accents
        if kind < 0.85:
            return "// " + rng.choice(self.en).strip()
        if kind < 0.93:
            value = rng.choice(_TOPICS_EN) if rng.random() < 0.1 else rng.choice(_EN_WORDS)
            return f'const {name.upper()} = "{value}"'
        return "\treturn nil\n}"

    def _html_line(self) -> str:
        rng = self.rng
        sentence = rng.choice(self.fr + self.en).strip()
        tag = rng.choice(("p", "li", "td", "h2", "span"))
        if rng.random() < 0.3:
            sentence = sentence.replace("é", "&eacute;", 1).replace(" et ", " &amp; ", 1)
        return f'  <{tag} class="c{rng.randint(1, 40)}">{sentence}</{tag}>'

    def _fill(self, pool: list[str], parts: list[str], size: int) -> None:
        total = sum(map(len, parts))
        while total < size:
            parts.append("\n".join(self.rng.choices(pool, k=8)))
            total += len(parts[-1]) + 1

    def prose(self, n: int) -> tuple[str, str]:
        rng = self.rng
        pool = self.fr if rng.random() < 0.6 else self.en
        parts: list[str] = []
        first = rng.random()
        if first < 0.15:  # a long first line: the excerpt cuts it
            parts.append("".join(rng.choices(pool, k=4)).strip())
        elif first < 0.25:
            parts.append("\n   \n\t" + rng.choice(pool).strip())
        else:
            parts.append(f"## {rng.choice(pool).strip()[:60]} (tour {n})")
        while len("\n\n".join(parts)) < TARGET_CHARS:
            parts.append("".join(rng.choices(pool, k=rng.randint(2, 5))).rstrip())
        label = rng.choice(("résumé", "Résumé", "notes", "Compte rendu", "summary", "", "RÉSUMÉ"))
        return (f"{label} tour {n}" if label else ""), "\n\n".join(parts)

    def source(self, n: int) -> tuple[str, str]:
        rng = self.rng
        parts = [f"// {rng.choice(_EN_WORDS)}_{n}.go"]
        self._fill(self.code, parts, TARGET_CHARS)
        path = f"src/{rng.choice(_EN_WORDS)}/{rng.choice(_FR_WORDS)}_{n % 500}.go"
        return f"code {path}", "\n".join(parts)

    def page(self, n: int) -> tuple[str, str]:
        title = self.rng.choice(self.fr).strip()[:50]
        parts = ["<!DOCTYPE html>", f'<html lang="fr"><head><title>{title}</title></head><body>']
        self._fill(self.html, parts, TARGET_CHARS - 20)
        parts.append("</body></html>")
        return f"page {title[:40]}", "\n".join(parts)

    def diff(self, n: int) -> tuple[str, str]:
        rng = self.rng
        path = f"docs/{rng.choice(_FR_WORDS)}.md"
        parts = [f"--- a/{path}\n+++ b/{path}"]
        while len("\n".join(parts)) < TARGET_CHARS:
            start = rng.randint(1, 900)
            hunk = [f"@@ -{start},4 +{start},5 @@"]
            pool = self.fr if rng.random() < 0.5 else self.en
            hunk += [rng.choice(" -+") + s.strip() for s in rng.choices(pool, k=rng.randint(3, 6))]
            parts.append("\n".join(hunk))
        return f"diff {path}", "\n".join(parts)

    def log(self, n: int) -> tuple[str, str]:
        rng = self.rng
        parts: list[str] = []
        day = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        while sum(len(line) + 1 for line in parts) < TARGET_CHARS:
            level = rng.choice(("INFO", "INFO", "DEBUG", "WARN", "ERROR"))
            clock = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
            msg, who = rng.choice(self.en).strip(), rng.choice(_PROPER)
            parts.append(f"{day}T{clock}Z {level} [{who}] req={n}-{len(parts)} {msg}")
        return rng.choice(("journal serveur", "Logs", "", "JOURNAL")), "\n".join(parts)

    def block(self, n: int) -> BlockSpec:
        rng = self.rng
        r = rng.random()
        kinds = ((0.45, self.prose), (0.6, self.source), (0.72, self.page), (0.86, self.diff))
        label, content = next((make for top, make in kinds if r < top), self.log)(n)
        if not 0.45 <= r < 0.6 and rng.random() < 0.35:  # code keeps its ASCII quotes
            content = _typographic(content)
        r = rng.random()
        if r < 0.04:  # a word outside Latin-1, somewhere in the middle
            cut = content.find(" ", len(content) // 2)
            content = f"{content[:cut]} {rng.choice(_WIDE)}{content[cut:]}"
        elif r < 0.045:
            content += " " + rng.choice(_EMOJI)
        return BlockSpec(label, content)


def generate_blocks(count: int, seed: int = DEFAULT_SEED) -> Iterator[BlockSpec]:
    """The first ``count`` blocks of the seeded stream."""
    return map(_Generator(seed).block, range(count))
