import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import weka.classifiers.Evaluation;
import weka.classifiers.bayes.NaiveBayes;
import weka.core.Instances;

/**
 * WEKA 3.6's Evaluation of NaiveBayes (default options) summed over several train/test splits of a dataset, the
 * way its cross-validation sums folds: one Evaluation per dataset; for every split setPriors(train), a new
 * NaiveBayes built on train, evaluateModel on test.
 *
 * Usage: java -cp weka.jar:DIR EvalDump JOBS
 * JOBS has one tab-separated line per split: dataset TAB classIndex (0-based) TAB train.arff TAB test.arff.
 * For each dataset it prints "BEGIN dataset", toSummaryString("=== Summary ===\n", false), a line "@@@",
 * toClassDetailsString(), "@@@", toMatrixString(), then "END".
 */
public class EvalDump {
    static Instances load(String path, int classIndex) throws Exception {
        BufferedReader reader = new BufferedReader(
            new InputStreamReader(new FileInputStream(path), StandardCharsets.UTF_8));
        try {
            Instances data = new Instances(reader);
            data.setClassIndex(classIndex);
            return data;
        } finally {
            reader.close();
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, List<String[]>> jobs = new LinkedHashMap<String, List<String[]>>();
        BufferedReader in = new BufferedReader(
            new InputStreamReader(new FileInputStream(args[0]), StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            String[] f = line.split("\t");
            if (!jobs.containsKey(f[0])) jobs.put(f[0], new ArrayList<String[]>());
            jobs.get(f[0]).add(f);
        }
        in.close();
        for (Map.Entry<String, List<String[]>> entry : jobs.entrySet()) {
            Evaluation eval = null;
            for (String[] f : entry.getValue()) {
                int classIndex = Integer.parseInt(f[1]);
                Instances train = load(f[2], classIndex);
                Instances test = load(f[3], classIndex);
                if (eval == null) eval = new Evaluation(train);
                eval.setPriors(train);
                NaiveBayes nb = new NaiveBayes();
                nb.buildClassifier(train);
                eval.evaluateModel(nb, test);
            }
            System.out.println("BEGIN " + entry.getKey());
            System.out.print(eval.toSummaryString("=== Summary ===\n", false));
            System.out.println("@@@");
            System.out.print(eval.toClassDetailsString());
            System.out.println("@@@");
            System.out.print(eval.toMatrixString());
            System.out.println("END");
        }
    }
}
