import weka.core.*;
import java.util.*;
/** For each n: WEKA Instances.randomize(new Random(seed)) of rows 0..n-1, then testCV(10, 9) and testCV(10, 0). */
public class SplitDump {
  public static void main(String[] a) throws Exception {
    int seed = Integer.parseInt(a[0]);
    StringBuilder out = new StringBuilder("{");
    for (int k = 1; k < a.length; k++) {
      int n = Integer.parseInt(a[k]);
      FastVector atts = new FastVector();
      atts.addElement(new Attribute("row"));
      Instances d = new Instances("rows", atts, n);
      for (int i = 0; i < n; i++) { Instance x = new Instance(1); x.setValue(0, i); d.add(x); }
      d.randomize(new Random(seed));
      out.append(k > 1 ? "," : "").append("\"").append(n).append("\":{");
      out.append("\"order\":").append(rows(d)).append(",\"fold9\":").append(rows(d.testCV(10, 9)))
         .append(",\"fold0\":").append(rows(d.testCV(10, 0))).append(",\"train9\":").append(rows(d.trainCV(10, 9))).append("}");
    }
    System.out.println(out.append("}"));
  }
  static String rows(Instances d) {
    StringBuilder s = new StringBuilder("[");
    for (int i = 0; i < d.numInstances(); i++) s.append(i > 0 ? "," : "").append((int) d.instance(i).value(0));
    return s.append("]").toString();
  }
}
