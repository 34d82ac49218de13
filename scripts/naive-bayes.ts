/** A multinomial naive Bayes text classifier: the offline baseline model of the reproduction. */
export class NaiveBayes {
  private readonly counts = new Map<string, Map<string, number>>();
  private readonly totals = new Map<string, number>();
  private readonly docs = new Map<string, number>();
  private readonly vocab = new Set<string>();
  private n = 0;

  static tokens(text: string): string[] {
    return text.toLowerCase().match(/[a-z']+/g) ?? [];
  }

  train(text: string, label: string): void {
    this.n++;
    this.docs.set(label, (this.docs.get(label) ?? 0) + 1);
    const words = this.counts.get(label) ?? new Map<string, number>();
    this.counts.set(label, words);
    for (const w of NaiveBayes.tokens(text)) {
      this.vocab.add(w);
      words.set(w, (words.get(w) ?? 0) + 1);
      this.totals.set(label, (this.totals.get(label) ?? 0) + 1);
    }
  }

  predict(text: string): string {
    let best = "";
    let bestScore = -Infinity;
    const v = this.vocab.size;
    for (const [label, words] of this.counts) {
      let score = Math.log((this.docs.get(label) ?? 0) / this.n);
      const total = this.totals.get(label) ?? 0;
      for (const w of NaiveBayes.tokens(text)) score += Math.log(((words.get(w) ?? 0) + 1) / (total + v));
      if (score > bestScore) [best, bestScore] = [label, score];
    }
    return best;
  }
}
