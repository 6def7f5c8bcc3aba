import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;

import weka.core.Instance;
import weka.core.Instances;
import weka.core.Range;
import weka.core.Statistics;
import weka.experiment.PairedCorrectedTTester;
import weka.experiment.PairedStats;
import weka.experiment.PairedTTester;

/**
 * Runs WEKA 3.6's Experimenter testers (PairedCorrectedTTester and PairedTTester) on a results file in the
 * Experimenter's ARFF result format.
 *
 * Usage: java -cp weka.jar:DIR TTestDump RESULTS.arff COLUMN SIGLEVEL
 * Keys as the Experimenter sets them: dataset Key_Dataset, result set Key_Scheme,Key_Scheme_options,
 * Key_Scheme_version_ID, run Key_Run. For both testers, every baseline b and every (dataset, result set j != b)
 * it prints one line "STAT tester b dataset j count meanDiff sdDiff probability significance ratio t", all
 * numbers with Double.toString. The t statistic is not a field of PairedStats: it is computed here from
 * the tester's own differencesStats exactly as PairedStats(Corrected).calculateDerived computes it, and
 * checked against the tester's probability (Statistics.FProbability(t*t, 1, count-1)); the ratio is the
 * tester's m_testTrainRatio, read by reflection. Then the tester's multiResultsetFull table (its v / *
 * marks) between "TABLE tester b" and "END".
 */
public class TTestDump {
    static Instances load(String path) throws Exception {
        BufferedReader reader = new BufferedReader(
            new InputStreamReader(new FileInputStream(path), StandardCharsets.UTF_8));
        try {
            return new Instances(reader);
        } finally {
            reader.close();
        }
    }

    static void run(String name, PairedTTester tester, Instances data, int column, double sig) throws Exception {
        tester.setInstances(data);
        tester.setDatasetKeyColumns(new Range("" + (data.attribute("Key_Dataset").index() + 1)));
        tester.setResultsetKeyColumns(new Range((data.attribute("Key_Scheme").index() + 1) + ","
            + (data.attribute("Key_Scheme_options").index() + 1) + ","
            + (data.attribute("Key_Scheme_version_ID").index() + 1)));
        tester.setRunColumn(data.attribute("Key_Run").index());
        tester.setSignificanceLevel(sig);
        tester.setShowStdDevs(true);
        // prepare the data sets and result sets by asking for a table once
        tester.multiResultsetFull(0, column);
        int datasets = tester.getNumDatasets();
        int resultsets = tester.getNumResultsets();
        Field specifiersField = PairedTTester.class.getDeclaredField("m_DatasetSpecifiers");
        specifiersField.setAccessible(true);
        Object specifiers = specifiersField.get(tester);
        java.lang.reflect.Method specifier = specifiers.getClass().getDeclaredMethod("specifier", int.class);
        specifier.setAccessible(true);
        for (int b = 0; b < resultsets; b++) {
        for (int d = 0; d < datasets; d++) {
            Instance spec = (Instance) specifier.invoke(specifiers, d);
            String dataset = spec.stringValue(data.attribute("Key_Dataset").index());
            for (int j = 0; j < resultsets; j++) {
                if (j == b) continue;
                PairedStats s = tester.calculateStatistics(spec, b, j, column);
                double ratio = Double.NaN;
                double t;
                double sd = s.differencesStats.stdDev;
                if (s instanceof weka.experiment.PairedStatsCorrected) {
                    Field f = weka.experiment.PairedStatsCorrected.class.getDeclaredField("m_testTrainRatio");
                    f.setAccessible(true);
                    ratio = f.getDouble(s);
                    t = s.differencesStats.mean / Math.sqrt((1 / s.count + ratio) * sd * sd);
                } else {
                    t = s.differencesStats.mean * Math.sqrt(s.count) / sd;
                }
                if (weka.core.Utils.gr(sd, 0)) {
                    double check = Statistics.FProbability(t * t, 1, (int) s.count - 1);
                    if (check != s.differencesProbability) {
                        throw new Exception("t does not reproduce the tester's probability: " + check + " != "
                            + s.differencesProbability);
                    }
                } else {
                    t = Double.NaN;  // the tester computes no t here
                }
                System.out.println("STAT " + name + " " + b + " " + dataset + " " + j + " " + s.count + " "
                    + s.differencesStats.mean + " " + sd + " " + s.differencesProbability + " "
                    + s.differencesSignificance + " " + ratio + " " + t);
            }
        }
        System.out.println("TABLE " + name + " " + b);
        System.out.println(tester.multiResultsetFull(b, column));
        System.out.println("END");
        }
    }

    public static void main(String[] args) throws Exception {
        Instances data = load(args[0]);
        int column = data.attribute(args[1]).index();
        double sig = Double.parseDouble(args[2]);
        run("corrected", new PairedCorrectedTTester(), new Instances(data), column, sig);
        run("plain", new PairedTTester(), new Instances(data), column, sig);
    }
}
